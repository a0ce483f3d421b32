#!/bin/bash
# One fuzzer's long campaign: JOBS independent libFuzzer processes (seeds 101, 102, …) sharing one
# working corpus, each running RUNS/JOBS executions (rounded up), so that the campaign totals at
# least RUNS executions. libFuzzer's own -jobs re-executes argv[0] and splits runs differently;
# plain processes keep the count exact and each log separate.
#
# usage: fuzz_campaign.sh FUZZER JOBS RUNS LOG_DIR CORPUS SEEDS [libFuzzer options…]
# Prints the total executions and fails if any process found something (its log names the input).
set -u
fuzzer=$1 jobs=$2 runs=$3 log_dir=$4 corpus=$5 seeds=$6
shift 6
if ! [[ $jobs =~ ^[1-9][0-9]*$ && $runs =~ ^[1-9][0-9]*$ ]]; then
  echo "fuzz_campaign: JOBS ($jobs) and RUNS ($runs) must be positive integers" >&2
  exit 2
fi
name=$(basename "$fuzzer")
per_job=$(( (runs + jobs - 1) / jobs ))
mkdir -p "$log_dir"
rm -f "$log_dir/$name".*.log  # an earlier campaign's logs must not count
pids=()
for i in $(seq 1 "$jobs"); do
  "$fuzzer" -seed=$((100 + i)) -runs=$per_job -print_final_stats=1 \
    -artifact_prefix="$log_dir/$name.$i." "$@" "$corpus" "$seeds" > "$log_dir/$name.$i.log" 2>&1 &
  pids+=($!)
done
failed=0
for i in "${!pids[@]}"; do
  if ! wait "${pids[$i]}"; then
    failed=1
    echo "$name: process $((i + 1)) failed; see $log_dir/$name.$((i + 1)).log" >&2
  fi
done
total=$(cat "$log_dir/$name".*.log | awk '/stat::number_of_executed_units/ {s += $2} END {print s + 0}')
secs=$(cat "$log_dir/$name".*.log | awk '/stat::average_exec_per_sec/ {s += $2} END {print s + 0}')
echo "$name: $total executions in $jobs processes ($secs executions/s together); logs in $log_dir"
exit $failed
