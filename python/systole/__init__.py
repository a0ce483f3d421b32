"""Systole from Python: the driver, the HLO compiler and the runtime of an open TPU.

    import numpy as np, systole
    dev = systole.Device("ref", config="small")        # or "rtl", "tcp://HOST:PORT", ...
    prog = systole.compile("examples/hlo/small_cnn_f32.hlo", config="small")
    print(prog.estimate["cycles"], prog.placement_table())
    result = dev.run(prog, [np.zeros(shape, np.float32) for shape in prog.input_shapes])
    result.outputs, result.stats["cycles"]

`systole.jax.jit(fn)` runs a JAX function on a device (see systole/jax.py and docs/PYTHON.md);
`systole.Trainer` trains to a target accuracy as `systole train` does (systole/training.py).
Errors from the C++ side are raised as `systole.Error` and its subclasses (DeviceError,
RunError, HloError, ConfigError) with the C++ message.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

# An installed package carries the configurations (pip install ./python): point the loader at
# them unless the user chose a directory. From the build tree the source tree's configs/ is found.
_configs = Path(__file__).resolve().parent / "configs"
if "SYSTOLE_CONFIG_DIR" not in os.environ and _configs.is_dir():
    os.environ["SYSTOLE_CONFIG_DIR"] = str(_configs)

from . import _systole  # noqa: E402
from ._systole import Buffer, ConfigError, DeviceError, Error, HloError, RunError  # noqa: E402

__all__ = [
    "Buffer", "ConfigError", "Device", "DeviceError", "Error", "HloError", "Program", "RunError",
    "RunResult", "TimeToAccuracy", "TrainProgress", "TrainSummary", "Trainer", "compile", "config_info", "configs",
    "interpret", "load", "numpy_dtype", "random_inputs", "resolve_device",
]

try:  # bf16 and f8 arrays: ml_dtypes is what JAX uses (and installs)
    import ml_dtypes as _ml_dtypes

    bfloat16 = np.dtype(_ml_dtypes.bfloat16)
    # HLO element types NumPy has no dtype of its own for: ml_dtypes', as JAX uses them.
    _ML_DTYPES = {"bf16": bfloat16, "f8e4m3fn": np.dtype(_ml_dtypes.float8_e4m3fn),
                  "f8e5m2": np.dtype(_ml_dtypes.float8_e5m2)}
except ImportError:  # pragma: no cover - the .venv has it
    bfloat16 = None
    _ML_DTYPES = {}

_NUMPY_TYPES = {
    "pred": np.bool_, "s8": np.int8, "s16": np.int16, "s32": np.int32, "s64": np.int64,
    "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
    "f16": np.float16, "f32": np.float32, "f64": np.float64,
}


def numpy_dtype(hlo_type: str) -> np.dtype:
    """The NumPy dtype of an HLO element type name ("f32", "bf16", "f8e4m3fn", "s8", ...)."""
    if hlo_type in ("bf16", "f8e4m3fn", "f8e5m2"):
        if hlo_type not in _ML_DTYPES:
            raise ImportError(f"{hlo_type} arrays need the ml_dtypes package")
        return _ML_DTYPES[hlo_type]
    try:
        return np.dtype(_NUMPY_TYPES[hlo_type])
    except KeyError:
        raise TypeError(f"no NumPy dtype for HLO element type {hlo_type!r}") from None


def resolve_device(device: str | None = None) -> dict[str, Any]:
    """What a device name (devices.toml), URI or comma-separated list stands for, as `systole
    info --device` shows it: `uris`, `requested`, `source`. None: SYSTOLE_DEVICE, else "ref"."""
    return dict(_systole.resolve_device(device or ""))


def configs() -> list[str]:
    """Names of the named configurations ("tiny", "small", "small-int8", "v1", "v2", ...)."""
    return list(_systole.configs())


def config_info(config: str = "small") -> dict[str, Any]:
    """A configuration's geometry: array size, element type, buffer sizes, clock."""
    return dict(_systole.config_info(config))


class Program:
    """A compiled model: device steps (Systole programs) and host steps, in execution order.

    `placement` lists every step as a dict: `kind` ("input", "device" or "host"),
    `instruction`, `opcode`, `source` (the Python line a JAX user wrote, when the HLO says),
    and for device steps `kernel`, `covers` (the HLO instructions the step computes) and the
    static estimate (`cycles`, `mxu_busy`, `macs`); for host steps `reason`.
    """

    def __init__(self, native: _systole.Program):
        self._native = native

    @property
    def config(self) -> str:
        """The configuration the program is compiled for."""
        return self._native.config

    @property
    def source_name(self) -> str:
        return self._native.source_name

    @property
    def hlo_text(self) -> str:
        """The HLO text it was compiled from."""
        return self._native.hlo_text

    @property
    def placement(self) -> list[dict[str, Any]]:
        return [dict(step) for step in self._native.placement]

    @property
    def estimate(self) -> dict[str, Any]:
        """The static cycle estimate of all device steps: cycles, mxu_busy, macs,
        mxu_utilization (MACs / (cycles x R x C)), mxu_busy_fraction."""
        return dict(self._native.estimate)

    @property
    def cycles(self) -> int:
        """Estimated device cycles (the golden model's timing; `ref` counts exactly these)."""
        return int(self._native.estimate["cycles"])

    @property
    def device_steps(self) -> int:
        return sum(1 for s in self._native.placement if s["kind"] == "device")

    @property
    def host_steps(self) -> int:
        return sum(1 for s in self._native.placement if s["kind"] == "host")

    @property
    def inputs(self) -> list[dict[str, Any]]:
        """Entry parameters in order: name, shape (tuple), dtype (HLO element type)."""
        return [dict(i) for i in self._native.inputs]

    @property
    def outputs(self) -> list[dict[str, Any]]:
        """Result arrays (tuples flattened depth-first): name, shape, dtype."""
        return [dict(o) for o in self._native.outputs]

    @property
    def input_shapes(self) -> list[tuple[int, ...]]:
        return [tuple(i["shape"]) for i in self._native.inputs]

    def save(self, path: str | os.PathLike) -> None:
        """Writes a model file (`systole run MODEL.sbin` runs it)."""
        self._native.save(os.fspath(path))

    def placement_table(self) -> str:
        """The placement as `systole compile` prints it, one line per step, with the Python
        source line where the HLO names one."""
        lines = []
        for s in self._native.placement:
            where = f"  @ {s['source']}" if s.get("source") else ""
            # a loop's body (or a branch) indented under the loop, as `systole compile` does
            indent = "  " * s.get("depth", 0)
            if s["kind"] == "input":
                lines.append(f"  input   {s['instruction']:<28} {s['shape']}{where}")
            elif s["kind"] == "device":
                lines.append(f"  {indent}device  {s['instruction']:<28} {s['kernel']}  [{' '.join(s['covers'])}]"
                             f"  ~{s['cycles']} cycles{where}")
            else:
                lines.append(f"  {indent}{s['kind']:<7} {s['instruction']:<28} {s['opcode']} ({s['reason']}){where}")
        e = self._native.estimate
        lines.append(f"{self.device_steps} device step(s), {self.host_steps} host step(s); "
                     f"static estimate {e['cycles']} cycles, MXU utilization {100 * e['mxu_utilization']:.1f}%")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"<systole.Program {self.source_name!r} for {self.config!r}: {self.device_steps} device, "
                f"{self.host_steps} host step(s), ~{self.cycles} cycles>")


def _looks_like_hlo(text: str) -> bool:
    return text.lstrip().startswith("HloModule") or ("ENTRY" in text and "{" in text)


def compile(hlo: str | os.PathLike, config: str = "small", *, fuse: bool = True,
            name: str | None = None, module: str | int | None = None, device_state: bool = False) -> Program:
    """Compiles XLA HLO text, or an HLO file given by path, for a configuration.

    `config` is a configuration name or a .toml path. `fuse=False` keeps bias, batch norm
    and activations out of the accumulator drain. `module` picks one module of a file that
    holds several (`// -----` separated, as XLA's tests write them): its index or its
    `HloModule` name (`systole compile --module`). `device_state=True` keeps a training step's
    parameters and optimizer state in device memory where the compiler can place their update
    there (`systole train`'s default; docs/TRAINING.md, "State in device memory"). Raises
    HloError with file:line:col for malformed text, Error for a model the configuration cannot run.
    """
    if isinstance(hlo, os.PathLike) or (isinstance(hlo, str) and not _looks_like_hlo(hlo)):
        path = Path(hlo)
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no such HLO file (pass HLO text or a path)")
        text = path.read_text()
        source = name or path.name
    else:
        text = hlo
        source = name or "<hlo text>"
    if module is not None:
        text = _systole.select_module(text, source, str(module))
    return Program(_systole.compile_text(text, source, config, fuse, device_state))


def load(path: str | os.PathLike) -> Program:
    """Loads a model file written by Program.save or `systole compile -o`."""
    return Program(_systole.load(os.fspath(path)))


def random_inputs(program: Program, seed: int = 1) -> list[np.ndarray]:
    """The documented random inputs (`systole run --random-inputs SEED`): floats uniform in
    [-1, 1) rounded to their type, integers in [-8, 8]; bf16 parameters as bfloat16 arrays."""
    arrays = _systole.random_inputs(program._native, int(seed))
    return [a.astype(numpy_dtype(i["dtype"]), copy=False) for a, i in zip(arrays, program.inputs)]


def interpret(program: Program, inputs: Sequence[Any]) -> list[np.ndarray]:
    """Runs the program's HLO on Systole's CPU interpreter (computes in double, rounds to
    each instruction's type): the reference `systole hlo interp` uses. bf16 results as
    bfloat16 arrays."""
    arrays = _systole.interpret(program._native, [_host_array(x) for x in inputs])
    return [a.astype(numpy_dtype(o["dtype"]), copy=False) for a, o in zip(arrays, program.outputs)]


class RunResult:
    """What Device.run returns: `outputs` (NumPy arrays, the root's tuple flattened;
    bf16 results as ml_dtypes.bfloat16) and `stats` (cycles, mxu_busy, macs,
    mxu_utilization, mxu_busy_fraction, device_steps, host_steps, device_seconds,
    host_seconds: the device's performance counters summed over the device steps). Every
    output has its HLO element type's dtype (pred: bool, s16: int16, …)."""

    def __init__(self, outputs: list[np.ndarray], stats: Mapping[str, Any]):
        self.outputs = outputs
        self.stats = dict(stats)

    @property
    def cycles(self) -> int:
        return int(self.stats["cycles"])

    def __repr__(self) -> str:
        shapes = ", ".join(f"{o.dtype}{list(o.shape)}" for o in self.outputs)
        return f"<systole.RunResult outputs=[{shapes}] cycles={self.cycles}>"


def _host_array(value: Any) -> np.ndarray:
    """A NumPy array the C++ side takes: bf16 and f8 widened to float32 (exactly)."""
    array = np.asarray(value)
    if any(array.dtype == t for t in _ML_DTYPES.values()):
        array = array.astype(np.float32)
    return array


class Device:
    """A Systole device opened by URI: "ref" (the golden model, in process), "rtl" (the
    Verilated core, in process, when the build has it), "tcp://HOST:PORT" (`systole serve`),
    "usb://VID:PID", "pcie://DDDD:BB:DD.F", ... `config` builds in-process models; every
    device then reports its own configuration (`info`)."""

    def __init__(self, uri: str = "ref", config: str = "small"):
        self._native = _systole.Device(uri, config)

    @property
    def uri(self) -> str:
        return self._native.uri

    @property
    def config(self) -> str:
        """The configuration the device reports."""
        return self._native.config

    @property
    def info(self) -> dict[str, Any]:
        """The device's identity: uri, config, rows, cols, dtype, buffer sizes, clock."""
        return dict(self._native.info)

    def allocate(self, nbytes: int, alignment: int = 64) -> Buffer:
        """Allocates device memory; freed when the returned Buffer is dropped."""
        return self._native.allocate(int(nbytes), int(alignment))

    def upload(self, array: Any) -> Buffer:
        """Allocates a buffer the size of `array` and writes it there."""
        data = np.ascontiguousarray(array)
        buffer = self.allocate(max(data.nbytes, 1))
        buffer.write(data)
        return buffer

    def counters(self) -> dict[str, int]:
        """The performance counters (CYCLES, MXU_BUSY, MACS, ...)."""
        return dict(self._native.counters())

    def clear_counters(self) -> None:
        self._native.clear_counters()

    def run(self, program: Program, inputs: Sequence[Any], jobs: int = 1) -> RunResult:
        """Runs a compiled program: device steps here, host steps on the CPU interpreter.
        `inputs` are the entry parameters in order, as arrays of their declared shapes.

        With `jobs` > 1 the golden model runs the program first and the device steps then run
        again on `jobs` devices opened like this one (its URI and configuration), side by side,
        each from the golden model's inputs and checked bit for bit against its output
        (`systole run --jobs`, docs/COMPILER.md): an `rtl` run on several cores."""
        native = program._native if isinstance(program, Program) else program
        raw = self._native.run(native, [_host_array(x) for x in inputs], jobs)
        # The C++ side hands arrays over in the .npy types of hlo::OutputArrays (bf16 as
        # float32, pred as uint8, s16 as int32, …); give each its HLO type's dtype back (exact).
        outputs = [np.asarray(a).astype(numpy_dtype(t), copy=False)
                   for a, t in zip(raw["outputs"], raw["dtypes"])]
        return RunResult(outputs, raw["stats"])

    def __repr__(self) -> str:
        return f"<systole.Device {self.uri!r} config={self.config!r}>"


# Training to a target accuracy (the loop of `systole train`): after Device and Program, which it uses.
from .training import TimeToAccuracy, TrainProgress, TrainSummary, Trainer  # noqa: E402
