"""Checks that every process of a pod across processes reported the whole pod: each `systole
train --json` summary (WORK/NAME.I.json for I in 0 … PROCESSES-1) names DEVICES devices and
PROCESSES processes, and all give the same last loss and device cycles. Shared by the pod tests.
    same_pod_reports.py WORK DEVICES NAME:PROCESSES…"""
import json
import sys

work, devices = sys.argv[1], int(sys.argv[2])
for pod in sys.argv[3:]:
    name, processes = pod.split(":")[0], int(pod.split(":")[1])
    runs = [json.load(open(f"{work}/{name}.{i}.json")) for i in range(processes)]
    assert all(r["pod"]["devices"] == devices and r["pod"]["processes"] == processes for r in runs), \
        (name, runs[0]["pod"])
    assert len({r["last_loss"] for r in runs}) == 1 and len({r["device_cycles"] for r in runs}) == 1, name
print(f"every process reports the {devices}-device pod and the same loss and device cycles: {' '.join(sys.argv[3:])}")
