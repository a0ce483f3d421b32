#!/usr/bin/env bash
# A pod across processes launched by mpirun (Open MPI from Debian): `mpirun -n P systole train
# --grad … --pod-rendezvous DIR`, without --pod-index or --pod-processes — each process takes its
# index and the count from the launcher's environment (runtime::ResolvePodProcesses). After 3
# steps the state must equal, bit for bit, that of one `ref` device running the same 8 shards —
# for 4 processes of one device and for 2 processes of two (the second also giving an agreeing
# --pod-processes). Options that disagree with mpirun, and mpirun's processes without a
# rendezvous directory, are errors naming the values. Exits 77 (skipped) only when there is no
# mpirun at all; scripts/setup.sh installs it (openmpi-bin).
#   pod_mpirun_test.sh SYSTOLE_BINARY SOURCE_DIR
set -euo pipefail
systole=$1
data=$2/examples/training
command -v mpirun > /dev/null || { echo "no mpirun (scripts/setup.sh installs Debian's openmpi-bin)"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Open MPI refuses to run as root without --allow-run-as-root (harmless otherwise), and starts
# more processes than cores only when oversubscribing.
mpirun=(timeout 300 mpirun --allow-run-as-root --oversubscribe)
train=("$systole" train --grad "$data/mlp_grad.hlo" --apply "$data/mlp_sgd_apply.hlo" --data "$data/digits.npz"
       --init "$data/mlp_sgd_init.npz" --shards 8 --steps 3 --json -q)
# mpirun -n PROCESSES of `systole train` on DEVICES each; process i's stdout and stderr go to
# NAME.i.json and NAME.i.err (the wrapper names the files by mpirun's rank: systole itself reads
# the launcher's environment, this test only to tell the files apart).
launch() {  # NAME PROCESSES DEVICES EXTRA-OPTIONS…
  local name=$1 processes=$2 devices=$3
  shift 3
  "${mpirun[@]}" -n "$processes" \
    bash -c 'exec "$@" > "$0.$OMPI_COMM_WORLD_RANK.json" 2> "$0.$OMPI_COMM_WORLD_RANK.err"' "$work/$name" \
    "${train[@]}" --device "$devices" "$@" < /dev/null > "$work/$name.mpirun" 2>&1
}
pod() {  # NAME PROCESSES DEVICES EXTRA-OPTIONS…
  local name=$1
  launch "$@" --pod-rendezvous "$work/$name.rv" --checkpoint "$work/$name.npz" ||
    { cat "$work/$name".*.err "$work/$name.mpirun"; echo "FAIL: mpirun of $name"; exit 1; }
}
same_state() {  # A.npz B.npz WHAT
  python3 "$(dirname "$0")/same_state.py" "$@"
}
"${train[@]}" --device ref --checkpoint "$work/one.npz" > "$work/one.json"
pod four 4 ref
same_state "$work/four.npz" "$work/one.npz" "mpirun -n 4 of 1 device"
pod twos 2 ref,ref --pod-processes 2
same_state "$work/twos.npz" "$work/one.npz" "mpirun -n 2 of 2 devices"
# Every process knew its place: each reports the whole pod and the same loss and cycles.
python3 "$(dirname "$0")/same_pod_reports.py" "$work" 4 four:4 twos:2
# Refused (mpirun exits non-zero) with the error in process RANK's stderr. NAME PROCESSES RANK MESSAGE OPTIONS…
refused() {
  local name=$1 processes=$2 rank=$3 message=$4
  shift 4
  if launch "$name" "$processes" ref "$@"; then echo "FAIL: $name: mpirun succeeded"; exit 1; fi
  grep -qF -- "$message" "$work/$name.$rank.err" ||
    { cat "$work/$name".*.err "$work/$name.mpirun"; echo "FAIL: $name: no '$message'"; exit 1; }
  echo "$name: $(head -c 300 "$work/$name.$rank.err")"
}
refused count 2 0 "--pod-processes 4, but mpirun started 2 processes (OMPI_COMM_WORLD_SIZE=2)" \
  --pod-processes 4 --pod-rendezvous "$work/count.rv"
refused index 2 1 "--pod-index 0, but mpirun started this process as index 1 (OMPI_COMM_WORLD_RANK=1)" \
  --pod-index 0 --pod-rendezvous "$work/index.rv"
refused nodir 2 0 "mpirun started 2 processes (OMPI_COMM_WORLD_SIZE=2): a pod across processes needs --pod-rendezvous DIR"
