#!/usr/bin/env bash
# The pod scaling tables of docs/TRAINING.md: the MLP or the CNN on digits trained to 97 % test
# accuracy by pods of 1, 2, 4 and 8 `ref` devices, one global batch of 32 rows in 8 shards of 4,
# gradients exchanged through Gloo; device time per step = the slowest device's cycles + the
# allgather modelled over the link (--link-gbps, --link-latency-us).
#   examples/training/pod_scaling.sh mlp|cnn [build/cli/systole] [extra systole train options]
# Fails when a pod does not reach the target (`make test-long` runs the CNN's table).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
model=${1:-}
case $model in
  mlp) epochs=40 ;;
  cnn) epochs=20 ;;
  *) echo "usage: $0 mlp|cnn [SYSTOLE] [systole train options…]" >&2; exit 2 ;;
esac
shift
systole=${1:-$here/../../build/cli/systole}
shift || true
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "| devices | slowest device, cycles/step | exchange, cycles/step | communication share | step time | speed-up | steps to 97 % | time to 97 % (device) | wall |"
echo "|---|---|---|---|---|---|---|---|---|"
for n in 1 2 4 8; do
  devices=$(printf 'ref%.0s,' $(seq "$n")); devices=${devices%,}
  "$systole" train --grad "$here/${model}_grad.hlo" --apply "$here/${model}_sgd_apply.hlo" \
    --eval "$here/${model}_eval.hlo" --data "$here/digits.npz" --init "$here/${model}_sgd_init.npz" \
    --device "$devices" --shards 8 --epochs "$epochs" --target-accuracy 0.97 --json -q "$@" > "$out/$n.json"
  python3 - "$out" "$n" <<'PY'
import json, sys
out, n = sys.argv[1], int(sys.argv[2])
def step_cycles(j):
    return max(j["pod"]["device_cycles_per_step"]) + j["pod"]["exchange_cycles_per_step"]
j = json.load(open(f"{out}/{n}.json"))
slowest, exchange = max(j["pod"]["device_cycles_per_step"]), j["pod"]["exchange_cycles_per_step"]
step = step_cycles(j)
base = step_cycles(json.load(open(f"{out}/1.json")))
mhz = j["clock_mhz"]
t = j.get("time_to_accuracy")
reached = f"{t['steps']} | {t['device_cycles']} cycles = {1e3 * t['device_seconds']:.2f} ms | {t['wall_seconds']:.1f} s" if t else "not reached | - | -"
print(f"| {n} | {slowest} | {exchange} | {100 * exchange / step:.0f} % | {step} cycles = {step / mhz:.2f} us | {base / step:.2f}x | {reached} |")
sys.exit(0 if t else 1)  # a pod that misses the target fails the script (and its test)
PY
done
