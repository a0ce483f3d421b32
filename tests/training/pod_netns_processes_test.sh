#!/usr/bin/env bash
# A pod across processes on four "hosts" (network namespaces), every process started with the
# same options as mpirun across hosts would start them: `--pod-interface pod0`, and each
# namespace's interface called pod0 has a different address, so each process's ranks listen on
# its own host's address, which it reads itself. The namespaces are joined by a bridge in this
# one (veth pairs, made here), so the gradients cross real interfaces. Only the index differs
# (mpirun would give it; it does not start processes inside namespaces). After 3 steps the
# state must equal, bit for bit, that of one `ref` device running the same 8 shards. An
# interface that is not there is refused, naming it. Needs root and `ip netns`; exits 77
# (skipped) with the reason otherwise.
#   pod_netns_processes_test.sh SYSTOLE_BINARY SOURCE_DIR
set -euo pipefail
systole=$1
data=$2/examples/training
skip() { echo "SKIPPED: $*"; exit 77; }
[[ $(id -u) -eq 0 ]] || skip "network namespaces need root"
command -v ip >/dev/null || skip "no ip command (iproute2)"

tag=sp$$                      # names unique to this run (interface names: at most 15 characters)
net=$((150 + $$ % 50))        # 10.NET.0.0/24 for the bridge and the four hosts
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  for k in 0 1 2 3; do
    ip link del "${tag}h$k" 2>/dev/null || true
    ip netns del "${tag}n$k" 2>/dev/null || true
  done
  ip link del "${tag}br" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
ip netns add "${tag}probe" 2>/dev/null || skip "cannot create a network namespace (ip netns add failed)"
ip netns del "${tag}probe"
ip link add "${tag}br" type bridge 2>/dev/null || skip "cannot create a bridge (ip link add type bridge failed)"
ip link set "${tag}br" up

for k in 0 1 2 3; do
  ns=${tag}n$k
  ip netns add "$ns"
  ip link add "${tag}h$k" type veth peer name "${tag}d$k"
  ip link set "${tag}h$k" master "${tag}br"
  ip link set "${tag}h$k" up
  ip link set "${tag}d$k" netns "$ns"
  ip -n "$ns" link set "${tag}d$k" name pod0   # the same name on every host
  ip -n "$ns" addr add "10.$net.0.$((k + 2))/24" dev pod0
  ip -n "$ns" link set pod0 up
  ip -n "$ns" link set lo up
done

train() {  # STEPS EXTRA-OPTIONS…
  local steps=$1
  shift
  timeout 300 "$systole" train --grad "$data/mlp_grad.hlo" --apply "$data/mlp_sgd_apply.hlo" \
    --data "$data/digits.npz" --init "$data/mlp_sgd_init.npz" --device ref --shards 8 --steps "$steps" -q "$@"
}
# What every host runs: the same options but the index (mpirun's, across hosts).
on_host() {  # K EXTRA-OPTIONS…
  local k=$1
  shift
  timeout 300 ip netns exec "${tag}n$k" "$systole" train --grad "$data/mlp_grad.hlo" --apply "$data/mlp_sgd_apply.hlo" \
    --data "$data/digits.npz" --init "$data/mlp_sgd_init.npz" --device ref --shards 8 --steps 3 -q \
    --pod-processes 4 --pod-index "$k" --pod-rendezvous "$work/rv" --pod-interface pod0 "$@"
}

# The interface must exist on the host: a name that is not there is refused, listing those that are.
if out=$(ip netns exec "${tag}n0" "$systole" train --grad "$data/mlp_grad.hlo" --apply "$data/mlp_sgd_apply.hlo" \
    --data "$data/digits.npz" --init "$data/mlp_sgd_init.npz" --device ref --shards 8 --steps 3 -q \
    --pod-processes 2 --pod-index 0 --pod-rendezvous "$work/none" --pod-interface pod9 2>&1); then
  echo "FAIL: --pod-interface pod9 was accepted"; exit 1
fi
grep -q "pod-interface pod9: this host has no network interface of that name (it has: lo, pod0)" <<<"$out" ||
  { echo "$out"; echo "FAIL: the unknown interface's error"; exit 1; }

for k in 1 2 3; do
  on_host "$k" > "$work/host$k.log" 2>&1 &
  pids+=($!)
done
on_host 0 --checkpoint "$work/pod.npz" > "$work/host0.log" 2>&1 || { cat "$work"/host*.log; echo "FAIL: host 0"; exit 1; }
for pid in "${pids[@]}"; do wait "$pid" || { cat "$work"/host*.log; echo "FAIL: a host"; exit 1; }; done
pids=()
# Each host's ranks listened on its own pod0 address: Gloo's rendezvous files hold each rank's
# listening socket address (a sockaddr_in: family 2, port, IPv4 address in bytes 4-7).
listening=$(python3 - "$work/rv" <<'PY'
import pathlib, socket, struct, sys
found = set()
for f in pathlib.Path(sys.argv[1]).iterdir():
    b = f.read_bytes()
    if len(b) >= 16 and struct.unpack_from("<H", b)[0] == socket.AF_INET:
        found.add(socket.inet_ntoa(b[4:8]))
print(" ".join(sorted(found)))
PY
)
expected="10.$net.0.2 10.$net.0.3 10.$net.0.4 10.$net.0.5"
[[ $listening == "$expected" ]] || { echo "FAIL: the ranks listened on '$listening', not on '$expected'"; exit 1; }

train 3 --checkpoint "$work/one.npz"
python3 "$(dirname "$0")/same_state.py" "$work/pod.npz" "$work/one.npz" \
  "4 processes on 4 hosts (network namespaces), each listening on its own pod0"
