#!/usr/bin/env bash
# A 4-device pod over tcp:// across real network interfaces: four network namespaces, each
# joined to this one by a veth pair and running `systole serve` on its own address (with a
# token, as a server off loopback requires); `systole train` drives the pod from here and its
# parameters after 3 steps must equal, bit for bit, those of one `ref` device running the same
# 8 shards. Needs root and `ip netns`; exits 77 (skipped) with the reason otherwise.
#   pod_netns_test.sh SYSTOLE_BINARY SOURCE_DIR
set -euo pipefail
systole=$1
data=$2/examples/training
skip() { echo "SKIPPED: $*"; exit 77; }
[[ $(id -u) -eq 0 ]] || skip "network namespaces need root"
command -v ip >/dev/null || skip "no ip command (iproute2)"

tag=st$$                      # names unique to this run (interface names: at most 15 characters)
net=$((200 + $$ % 50))        # 10.NET.K.0/24 for namespace K
work=$(mktemp -d)
servers=()
cleanup() {
  for pid in "${servers[@]}"; do kill "$pid" 2>/dev/null || true; done
  for k in 0 1 2 3; do
    ip link del "${tag}h$k" 2>/dev/null || true
    ip netns del "${tag}n$k" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT
ip netns add "${tag}probe" 2>/dev/null || skip "cannot create a network namespace (ip netns add failed)"
ip netns del "${tag}probe"

head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$work/token"
chmod 600 "$work/token"
uris=()
for k in 0 1 2 3; do
  ns=${tag}n$k
  ip netns add "$ns"
  ip link add "${tag}h$k" type veth peer name "${tag}d$k"
  ip link set "${tag}d$k" netns "$ns"
  ip addr add "10.$net.$k.1/24" dev "${tag}h$k"
  ip link set "${tag}h$k" up
  ip -n "$ns" addr add "10.$net.$k.2/24" dev "${tag}d$k"
  ip -n "$ns" link set "${tag}d$k" up
  ip -n "$ns" link set lo up
  ip netns exec "$ns" "$systole" serve --device ref --config small --listen "10.$net.$k.2:7000" \
    --token-file "$work/token" > "$work/serve$k.log" 2>&1 &
  servers+=($!)
  uris+=("tcp://10.$net.$k.2:7000")
done
for k in 0 1 2 3; do  # each server listening
  for _ in $(seq 100); do grep -q "hosting" "$work/serve$k.log" 2>/dev/null && break; sleep 0.1; done
done

train() {  # DEVICES CHECKPOINT
  SYSTOLE_TOKEN_FILE=$work/token "$systole" train --grad "$data/mlp_grad.hlo" --apply "$data/mlp_sgd_apply.hlo" \
    --data "$data/digits.npz" --init "$data/mlp_sgd_init.npz" --device "$1" --shards 8 --steps 3 \
    --checkpoint "$2" -q
}
pod=$(IFS=,; echo "${uris[*]}")
train "$pod" "$work/pod4.npz"
train ref "$work/ref1.npz"
# The state arrays must be identical (arr_0, steps and device cycles, is not compared).
python3 "$(dirname "$0")/same_state.py" "$work/pod4.npz" "$work/ref1.npz" "4 devices in network namespaces ($pod)"
