#!/usr/bin/env bash
# The pod scaling table of docs/TRAINING.md: the MLP on digits trained to 97 % test accuracy by
# pods of 1, 2, 4 and 8 `ref` devices, one global batch of 32 rows in 8 shards of 4, gradients
# exchanged through Gloo; device time per step = the slowest device's cycles + the allgather
# modelled over the link (--link-gbps, --link-latency-us).
#   examples/training/pod_scaling.sh [build/cli/systole] [extra systole train options]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
systole=${1:-$here/../../build/cli/systole}
shift || true
echo "| devices | slowest device, cycles/step | exchange, cycles/step | communication share | step time | speed-up | steps to 97 % | time to 97 % (device) | wall |"
echo "|---|---|---|---|---|---|---|---|---|"
for n in 1 2 4 8; do
  devices=$(printf 'ref%.0s,' $(seq "$n")); devices=${devices%,}
  "$systole" train --grad "$here/mlp_grad.hlo" --apply "$here/mlp_sgd_apply.hlo" --eval "$here/mlp_eval.hlo" \
    --data "$here/digits.npz" --init "$here/mlp_sgd_init.npz" --device "$devices" --shards 8 \
    --epochs 40 --target-accuracy 0.97 --json -q "$@" > "/tmp/pod_scaling_$n.json"
  python3 - "$n" <<'PY'
import json, sys
n = int(sys.argv[1])
def step_cycles(j):
    return max(j["pod"]["device_cycles_per_step"]) + j["pod"]["exchange_cycles_per_step"]
j = json.load(open(f"/tmp/pod_scaling_{n}.json"))
slowest, exchange = max(j["pod"]["device_cycles_per_step"]), j["pod"]["exchange_cycles_per_step"]
step = step_cycles(j)
base = step_cycles(json.load(open("/tmp/pod_scaling_1.json")))
mhz = j["clock_mhz"]
t = j.get("time_to_accuracy")
reached = f"{t['steps']} | {t['device_cycles']} cycles = {1e3 * t['device_seconds']:.2f} ms | {t['wall_seconds']:.1f} s" if t else "not reached | - | -"
print(f"| {n} | {slowest} | {exchange} | {100 * exchange / step:.0f} % | {step} cycles = {step / mhz:.2f} us | {base / step:.2f}x | {reached} |")
PY
done
