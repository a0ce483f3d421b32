#!/usr/bin/env python3
"""Which unit bounds each launch of a `systole run --trace` timeline, and the MACs it loses.

Reads the Chrome trace `systole run … --trace run.json` writes (docs/TRACE.md) on `ref` or
`rtl`, and for every launch prints its cycles, its useful-MAC utilization (MACS / (cycles ×
array PEs)), the cycles lost against a perfectly busy array, and the share of the launch each
unit had an instruction in flight (the union of that unit's instruction spans, over all its
tracks). A launch is put down to the first unit busy for more than --bound of it, LOAD before
WEIGHT before MXU, so that the table says where the cycles went (docs/MODEL.md uses it for
ResNet-50):

    systole run model.hlo --device ref --network-inputs 1 --trace run.json -q
    scripts/launch_bounds.py run.json --pes 256
"""
import argparse
import bisect
import collections
import json
import sys

UNITS = ("LOAD", "WEIGHT", "MXU", "VECTOR", "STORE")


def busy_cycles(spans):
    """Cycles covered by at least one (start, end) span."""
    total, start, end = 0, None, None
    for s, e in sorted(spans):
        if start is None or s > end:
            if start is not None:
                total += end - start
            start, end = s, e
        else:
            end = max(end, e)
    return total + (end - start if start is not None else 0)


def launches_with_occupancy(events):
    """(launch event, {unit: share of the launch busy}) for every launch, in order."""
    tracks = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
              if e.get("ph") == "M" and e.get("name") == "thread_name"}
    launches = sorted((e for e in events if e.get("cat") == "launch"), key=lambda e: e["ts"])
    instructions = sorted((e for e in events if e.get("cat") == "instruction"), key=lambda e: e["ts"])
    starts = [e["ts"] for e in instructions]
    for launch in launches:
        cycles = launch["args"]["counters"]["CYCLES"]
        first = bisect.bisect_left(starts, launch["ts"])
        last = bisect.bisect_left(starts, launch["ts"] + launch["dur"])
        spans = collections.defaultdict(list)
        for e in instructions[first:last]:
            unit = tracks.get((e["pid"], e["tid"]), "?").split(" #")[0]  # "LOAD #2" is LOAD's second track
            begin = e["args"]["cycle"]
            spans[unit].append((begin, begin + e["args"].get("cycles", 0)))
        yield launch, {unit: busy_cycles(s) / cycles for unit, s in spans.items()} if cycles else {}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trace", help="the JSON file systole run --trace wrote")
    parser.add_argument("--pes", type=int, default=256, help="MACs the array does per cycle (16x16: 256)")
    parser.add_argument("--bound", type=float, default=0.9, help="busy share that makes a unit the bound")
    parser.add_argument("--launches", action="store_true", help="print every launch, not only the summary")
    args = parser.parse_args()
    with open(args.trace) as f:
        trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace

    groups = collections.defaultdict(lambda: [0, 0, 0.0])  # launches, cycles, lost
    total_cycles = total_lost = 0
    for launch, occupancy in launches_with_occupancy(events):
        counters = launch["args"]["counters"]
        cycles, macs = counters["CYCLES"], counters["MACS"]
        lost = cycles - macs / args.pes
        if macs == 0:
            bound = "no MACs"
        else:
            bound = next((f"{u} busy > {args.bound:.0%}" for u in UNITS if occupancy.get(u, 0) > args.bound), "none")
        group = groups[bound]
        group[0] += 1
        group[1] += cycles
        group[2] += lost
        total_cycles += cycles
        total_lost += lost
        if args.launches:
            busy = " ".join(f"{u} {occupancy.get(u, 0):4.0%}" for u in UNITS)
            print(f"{cycles:9} {macs / args.pes / cycles if cycles else 0:6.1%} lost {lost:9.0f}  {busy}  {launch['name']}")
    if total_cycles == 0:
        sys.exit(f"{args.trace}: no launches with cycles")
    print(f"{'bound':22} {'launches':>8} {'cycles':>10} {'lost':>10} {'of all':>7} {'useful':>7}")
    for bound, (count, cycles, lost) in sorted(groups.items(), key=lambda g: -g[1][2]):
        print(f"{bound:22} {count:8} {cycles:10} {lost:10.0f} {lost / total_cycles:7.1%} {1 - lost / cycles:7.1%}")
    print(f"{'all':22} {sum(g[0] for g in groups.values()):8} {total_cycles:10} {total_lost:10.0f} "
          f"{total_lost / total_cycles:7.1%} {1 - total_lost / total_cycles:7.1%}")


if __name__ == "__main__":
    main()
