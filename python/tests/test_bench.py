"""bench/python_bench.py (`make bench`) still runs and reports what docs/PYTHON.md quotes: a
small run of it (quarter-MiB round trips, a few calls) through ref and tcp://, and the
baselines it compares against. Figures are not checked here (benchmarks, not timed tests)."""
import json
import os
import sys

import numpy as np
import pytest

import systole
from conftest import SOURCE_DIR

sys.path.insert(0, str(SOURCE_DIR / "bench"))
import python_bench  # noqa: E402


def test_native_run_baseline_runs_the_same_program(ref):
    program = systole.compile(python_bench.CALL_PROGRAM, config="small")
    inputs = [np.ones((16, 16), np.float32), np.eye(16, dtype=np.float32)]
    seconds = ref._native._native_run_seconds(program._native, inputs, 3)
    assert len(seconds) == 3 and all(s > 0 for s in seconds)
    with pytest.raises(ValueError, match="configuration"):
        wrong = systole.compile(python_bench.CALL_PROGRAM, config="v2")
        ref._native._native_run_seconds(wrong._native, inputs, 1)


def test_python_bench_reports_per_call_and_round_trips(tmp_path):
    command = os.environ.get("SYSTOLE_COMMAND")
    devices = "ref,tcp" if command else "ref"
    out = tmp_path / "bench.json"
    args = ["--mib", "0.25", "--repeat", "2", "--calls", "5", "--devices", devices, "--json", str(out)]
    assert python_bench.main(args + (["--systole", command] if command else [])) == 0
    report = json.loads(out.read_text())
    (call,) = report["per_call"]
    assert call["python_us"] > 0 and call["cpp_us"] > 0
    trips = {r["device"].split(":")[0]: r for r in report["round_trip"]}
    assert set(trips) == set(devices.split(","))
    assert all(r["bytes"] == 2**18 and r["memcpy_ms"] > 0 for r in trips.values())
