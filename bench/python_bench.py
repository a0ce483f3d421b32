"""What Python costs on top of the C++ driver (docs/PYTHON.md, "Performance"), measured in one
process so that both sides of each ratio share the machine's load at the same moment:

1. Per-call overhead: `Device.run` from Python (NumPy in, NumPy out) against the same compiled
   program run through the C++ API (runtime::Execute with arguments already converted, timed
   in C++: `_native_run_seconds`), on a one-step program so that the device's own work is small.
2. A 64 MiB NumPy round trip (`Buffer.write` then `Buffer.read` into a new array) through each
   device against two plain memcpys of the same bytes (`_native_memcpy_seconds`): `ref` (in
   process), `rtl` (the Verilated SoC's memory, when the build has it) and `tcp://` (a
   `systole serve` hosting `ref` on loopback, started here). The `rtl` device moves host data
   through the simulated SoC's host port, 32 bytes per simulated clock, so its row measures the
   simulator (2 M cycles each way for 64 MiB, minutes), not Python; it runs `--rtl-repeat` (1)
   round trips.

Medians over the repetitions; every round trip's bytes are checked.

    PYTHONPATH=build/python .venv/bin/python bench/python_bench.py --systole build/cli/systole
    [--mib 64] [--repeat 5] [--rtl-repeat 1] [--calls 200] [--devices ref,rtl,tcp] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import time

import numpy as np

import systole

# One 16x16 bf16 matrix product (one device step on `small`) plus its bias add.
CALL_PROGRAM = """HloModule python_bench_call
ENTRY main {
  a = f32[16,16] parameter(0)
  b = f32[16,16] parameter(1)
  ROOT d = f32[16,16] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
"""


def median(values):
    return statistics.median(values)


def per_call(device: systole.Device, calls: int) -> dict:
    program = systole.compile(CALL_PROGRAM, config=device.config)
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal((16, 16)).astype(np.float32) for _ in range(2)]
    device.run(program, inputs)  # warm: first-call allocations and caches on both paths
    python_seconds = []
    for _ in range(calls):
        start = time.perf_counter()
        device.run(program, inputs)
        python_seconds.append(time.perf_counter() - start)
    native_seconds = device._native._native_run_seconds(program._native, inputs, calls)
    py_s, cpp_s = median(python_seconds), median(native_seconds)
    return {"device": device.uri, "calls": calls, "python_us": py_s * 1e6, "cpp_us": cpp_s * 1e6,
            "overhead_us": (py_s - cpp_s) * 1e6, "ratio": py_s / cpp_s}


def round_trip(device: systole.Device, nbytes: int, repeat: int) -> dict:
    data = np.random.default_rng(1).integers(0, 256, nbytes, dtype=np.uint8)
    buffer = device.allocate(nbytes)
    seconds = []
    for k in range(repeat):
        data[k] ^= 0xFF  # a different payload every time
        start = time.perf_counter()
        buffer.write(data)
        back = buffer.read(np.uint8, (nbytes,))
        seconds.append(time.perf_counter() - start)
        if not np.array_equal(back, data):
            raise SystemExit(f"round trip through {device.uri}: the bytes read back differ from those written")
    memcpy = systole._systole._native_memcpy_seconds(nbytes, 2 * repeat)
    trip_s, copy_s = median(seconds), 2 * median(memcpy)
    return {"device": device.uri, "bytes": nbytes, "repeat": repeat, "round_trip_ms": trip_s * 1e3,
            "memcpy_ms": copy_s * 1e3, "gib_per_s": 2 * nbytes / trip_s / 2**30, "ratio": trip_s / copy_s}


class Server:
    """`systole serve` hosting ref on an ephemeral loopback port, for the tcp:// row."""

    def __init__(self, systole_command: str, config: str):
        self.process = subprocess.Popen([systole_command, "serve", "--device", "ref", "--config", config,
                                         "--listen", "127.0.0.1:0"],
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        line = self.process.stdout.readline()
        match = re.search(r"tcp://[0-9.]+:[0-9]+", line)
        if not match:
            self.close()
            raise SystemExit(f"systole serve did not say where it listens: {line!r}")
        self.uri = match.group(0)

    def close(self):
        self.process.terminate()
        self.process.wait(timeout=30)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--systole", default="build/cli/systole", help="the systole command (for tcp://)")
    parser.add_argument("--config", default="small")
    parser.add_argument("--mib", type=float, default=64.0, help="round-trip size in MiB")
    parser.add_argument("--repeat", type=int, default=5, help="round trips per device")
    parser.add_argument("--rtl-repeat", type=int, default=1, help="round trips through rtl (minutes each at 64 MiB)")
    parser.add_argument("--calls", type=int, default=200, help="calls for the per-call overhead")
    parser.add_argument("--devices", default="ref,rtl,tcp", help="round-trip devices: ref, rtl, tcp")
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args(argv)

    report = {"config": args.config, "per_call": [], "round_trip": []}
    ref = systole.Device("ref", config=args.config)
    report["per_call"].append(per_call(ref, args.calls))
    nbytes = int(args.mib * 2**20)
    server = None
    try:
        for name in args.devices.split(","):
            if name == "tcp":
                server = Server(args.systole, args.config)
                device = systole.Device(server.uri, config=args.config)
            else:
                try:
                    device = systole.Device(name, config=args.config)
                except systole.DeviceError as error:
                    print(f"{name}: skipped ({error})", file=sys.stderr)
                    continue
            repeat = args.rtl_repeat if name == "rtl" else args.repeat
            report["round_trip"].append(round_trip(device, nbytes, repeat))
            del device
    finally:
        if server:
            server.close()

    print(f"Per call, {args.calls} calls of a one-step program on {args.config} (medians):")
    print(f"  {'device':<24}{'Python':>12}{'C++ API':>12}{'overhead':>12}{'ratio':>8}")
    for r in report["per_call"]:
        print(f"  {r['device']:<24}{r['python_us']:>10.1f}us{r['cpp_us']:>10.1f}us"
              f"{r['overhead_us']:>10.1f}us{r['ratio']:>8.2f}")
    print(f"NumPy round trip of {args.mib:g} MiB (write + read, medians of {args.repeat}; rtl: {args.rtl_repeat}):")
    print(f"  {'device':<24}{'round trip':>12}{'2 x memcpy':>12}{'GiB/s':>8}{'ratio':>8}")
    for r in report["round_trip"]:
        print(f"  {r['device']:<24}{r['round_trip_ms']:>10.1f}ms{r['memcpy_ms']:>10.1f}ms"
              f"{r['gib_per_s']:>8.2f}{r['ratio']:>8.1f}")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(report, out, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
