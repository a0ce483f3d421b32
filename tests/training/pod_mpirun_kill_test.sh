#!/usr/bin/env bash
# A process of a pod killed under mpirun (Open MPI) in the middle of training, after the first
# checkpoint (the end of epoch 1, step 44): `mpirun -n 2 systole train … --checkpoint`, then
# SIGKILL to process 1 as soon as the checkpoint is written. mpirun must end at once (every wait
# here is bounded: a hang fails), the survivor's error must name the step, and it or mpirun the
# process lost, and the checkpoint, resumed by a new `mpirun -n 2`, must reach the state of an
# uninterrupted run bit for bit. Exits 77 (skipped) only when there is no mpirun.
#   pod_mpirun_kill_test.sh SYSTOLE_BINARY SOURCE_DIR
set -euo pipefail
systole=$1
data=$2/examples/training
command -v mpirun > /dev/null || { echo "no mpirun (scripts/setup.sh installs Debian's openmpi-bin)"; exit 77; }
work=$(mktemp -d)
launcher=
cleanup() {
  [ -z "$launcher" ] || kill "$launcher" 2> /dev/null || true  # timeout passes it on to mpirun
  rm -rf "$work"
}
trap cleanup EXIT
mpirun=(mpirun --allow-run-as-root --oversubscribe -n 2)
train=("$systole" train --grad "$data/mlp_grad.hlo" --apply "$data/mlp_sgd_apply.hlo" --data "$data/digits.npz"
       --init "$data/mlp_sgd_init.npz" --shards 8 --json -q)
steps=60  # past the checkpoint of epoch 1 (44 steps of 32 rows), short of epoch 2's
timeout 60 "${train[@]}" --device ref --steps "$steps" --checkpoint "$work/one.npz" > /dev/null

# The pod trains without end; each process writes its pid (to be killed) and its stderr by rank.
timeout 60 "${mpirun[@]}" \
  bash -c 'echo $$ > "$0.$OMPI_COMM_WORLD_RANK.pid"; exec "$@" 2> "$0.$OMPI_COMM_WORLD_RANK.err"' "$work/killed" \
  "${train[@]}" --device ref --steps 1000000 --epochs 100000 --pod-rendezvous "$work/killed.rv" \
  --checkpoint "$work/killed.npz" < /dev/null > "$work/killed.mpirun" 2>&1 &
launcher=$!
for _ in $(seq 600); do  # 30 s at most
  [ -f "$work/killed.npz" ] && [ -f "$work/killed.1.pid" ] && break
  sleep 0.05
done
[ -f "$work/killed.npz" ] || { cat "$work"/killed.*; echo "FAIL: no checkpoint after 30 s"; exit 1; }
kill -9 "$(cat "$work/killed.1.pid")"
start=$SECONDS
status=0
wait "$launcher" || status=$?
launcher=
[ "$status" -ne 124 ] || { cat "$work"/killed.*.err; echo "FAIL: mpirun still running 60 s after the kill"; exit 1; }
[ "$status" -ne 0 ] || { echo "FAIL: mpirun succeeded although process 1 was killed"; exit 1; }
# The survivor names the step; the lost device and process are named by the survivor where Gloo
# names the peer by an address it shared (runtime/pod.cpp, ShareWhoIsWho), else by mpirun.
error=$(cat "$work/killed.0.err")
grep -qE "training step [0-9]+ \(epoch [0-9]+\): device 0 \(ref\): .*Gloo allgather" <<< "$error" ||
  { cat "$work/killed.0.err" "$work/killed.mpirun"; echo "FAIL: the survivor's error does not name the step"; exit 1; }
grep -qF "lost device 1 (ref) in process 1" <<< "$error" ||
  grep -qE "process rank 1 .* exited on signal 9" "$work/killed.mpirun" ||
  { cat "$work/killed.0.err" "$work/killed.mpirun"; echo "FAIL: nothing names the lost process"; exit 1; }
echo "process 1 killed: mpirun ended after $((SECONDS - start)) s (status $status): $error"
echo "mpirun: $(grep -E "process rank" "$work/killed.mpirun")"

# The last checkpoint resumes, under mpirun again, to the uninterrupted run's state.
timeout 60 "${mpirun[@]}" "${train[@]}" --device ref --steps "$steps" --resume "$work/killed.npz" \
  --pod-rendezvous "$work/resumed.rv" --checkpoint "$work/resumed.npz" < /dev/null > "$work/resumed.mpirun" 2>&1 ||
  { cat "$work/resumed.mpirun"; echo "FAIL: resuming from the checkpoint"; exit 1; }
python3 "$(dirname "$0")/same_state.py" "$work/resumed.npz" "$work/one.npz" \
  "the pod resumed from its checkpoint after a process was killed"
