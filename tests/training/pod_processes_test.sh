#!/usr/bin/env bash
# A pod across processes (runtime::PodProcesses, `systole train --pod-processes N --pod-index I
# --pod-rendezvous DIR`): separate `systole train` processes, each with its own devices, meet
# through a rendezvous directory and exchange gradients over Gloo's TCP transport. After 3 steps
# the state must equal, bit for bit, that of one `ref` device running the same 8 shards — for
# 4 processes of one device and for 2 processes of two — and for pods whose processes take their
# index and count from the environment MPICH's mpiexec (Hydra: PMI_RANK, PMI_SIZE) or Slurm's
# srun (SLURM_PROCID, SLURM_NTASKS) would give them, set here as those launchers would (neither
# is installed). A reused rendezvous directory is refused, and a process that dies mid-training stops the others with an error naming the
# exchange instead of a hang.
#   pod_processes_test.sh SYSTOLE_BINARY SOURCE_DIR
set -euo pipefail
systole=$1
data=$2/examples/training
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
train() {  # DEVICES STEPS EXTRA-OPTIONS…
  local devices=$1 steps=$2
  shift 2
  timeout 300 "$systole" train --grad "$data/mlp_grad.hlo" --apply "$data/mlp_sgd_apply.hlo" \
    --data "$data/digits.npz" --init "$data/mlp_sgd_init.npz" --device "$devices" --shards 8 \
    --steps "$steps" --json -q "$@"
}
# A pod of PROCESSES processes with DEVICES each; the first writes CHECKPOINT.
pod() {  # NAME PROCESSES DEVICES
  local name=$1 processes=$2 devices=$3
  pids=()
  for i in $(seq 1 $((processes - 1))); do
    train "$devices" 3 --pod-processes "$processes" --pod-index "$i" --pod-rendezvous "$work/$name.rv" \
      > "$work/$name.$i.json" 2> "$work/$name.$i.err" &
    pids+=($!)
  done
  train "$devices" 3 --pod-processes "$processes" --pod-index 0 --pod-rendezvous "$work/$name.rv" \
    --checkpoint "$work/$name.npz" > "$work/$name.0.json" 2> "$work/$name.0.err" ||
    { cat "$work/$name".*.err; echo "FAIL: process 0 of $name"; exit 1; }
  for pid in "${pids[@]}"; do wait "$pid" || { cat "$work/$name".*.err; echo "FAIL: a process of $name"; exit 1; }; done
  pids=()
}
same_state() {  # A.npz B.npz WHAT
  python3 "$(dirname "$0")/same_state.py" "$@"
}
train ref 3 --checkpoint "$work/one.npz" > "$work/one.json"
pod four 4 ref
same_state "$work/four.npz" "$work/one.npz" "4 processes of 1 device"
pod twos 2 ref,ref
same_state "$work/twos.npz" "$work/one.npz" "2 processes of 2 devices"
# A pod started as a launcher starts it: every process with the same options (no --pod-index or
# --pod-processes) and its place in INDEX_VARIABLE and COUNT_VARIABLE.
launched_pod() {  # NAME INDEX_VARIABLE COUNT_VARIABLE PROCESSES DEVICES
  local name=$1 index_variable=$2 count_variable=$3 processes=$4 devices=$5
  pids=()
  for i in $(seq 0 $((processes - 1))); do
    timeout 300 env "$index_variable=$i" "$count_variable=$processes" "$systole" train --grad "$data/mlp_grad.hlo" \
      --apply "$data/mlp_sgd_apply.hlo" --data "$data/digits.npz" --init "$data/mlp_sgd_init.npz" \
      --device "$devices" --shards 8 --steps 3 --json -q --pod-rendezvous "$work/$name.rv" \
      --checkpoint "$work/$name.npz" > "$work/$name.$i.json" 2> "$work/$name.$i.err" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || { cat "$work/$name".*.err; echo "FAIL: a process of $name"; exit 1; }; done
  pids=()
}
launched_pod hydra PMI_RANK PMI_SIZE 4 ref
same_state "$work/hydra.npz" "$work/one.npz" "4 processes placed by PMI_RANK and PMI_SIZE (MPICH's mpiexec)"
launched_pod slurm SLURM_PROCID SLURM_NTASKS 2 ref,ref
same_state "$work/slurm.npz" "$work/one.npz" "2 processes placed by SLURM_PROCID and SLURM_NTASKS (Slurm's srun)"
# Every process reports the whole pod, and all saw the same losses.
python3 "$(dirname "$0")/same_pod_reports.py" "$work" 4 four:4 twos:2 hydra:4 slurm:2
# The same rendezvous directory again: refused at once, naming it.
if train ref 3 --pod-processes 4 --pod-index 0 --pod-rendezvous "$work/four.rv" > /dev/null 2> "$work/reuse.err"; then
  echo "FAIL: a reused rendezvous directory was accepted"; exit 1
fi
grep -q "left by an earlier pod" "$work/reuse.err" || { cat "$work/reuse.err"; echo "FAIL: reuse message"; exit 1; }
echo "a reused rendezvous directory is refused: $(head -c 200 "$work/reuse.err")"
# Process 1 killed mid-training: process 0 stops with an error naming the exchange.
# (started directly, so that $! is the systole process itself)
"$systole" train --grad "$data/mlp_grad.hlo" --apply "$data/mlp_sgd_apply.hlo" --data "$data/digits.npz" \
  --init "$data/mlp_sgd_init.npz" --device ref --shards 8 --steps 1000000 --epochs 100000 -q \
  --pod-processes 2 --pod-index 1 --pod-rendezvous "$work/kill.rv" > /dev/null 2>&1 &
victim=$!
disown "$victim"  # its death is the point: no "Killed" notice from this shell
pids=("$victim")
( sleep 3; kill -9 "$victim" ) &
start=$SECONDS
if train ref 1000000 --epochs 100000 --pod-processes 2 --pod-index 0 --pod-rendezvous "$work/kill.rv" \
    > /dev/null 2> "$work/kill.err"; then
  echo "FAIL: process 0 finished although process 1 died"; exit 1
fi
grep -q "Gloo" "$work/kill.err" || { cat "$work/kill.err"; echo "FAIL: the error does not name the exchange"; exit 1; }
echo "process 1 killed: process 0 stopped after $((SECONDS - start)) s: $(head -c 300 "$work/kill.err")"
