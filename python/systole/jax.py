"""JAX functions on Systole: `systole.jax.jit(fn)`.

    import jax.numpy as jnp, systole.jax

    @systole.jax.jit                      # or systole.jax.jit(fn, device="rtl", config="small")
    def mlp(x, w1, w2):
        return jnp.maximum(x @ w1, 0) @ w2

    y = mlp(x, w1, w2)                    # NumPy arrays, in fn's output pytree structure
    print(mlp.report())                   # where each op ran, with the Python line, and cycles

The callable lowers `fn` with JAX for the shapes and dtypes of its arguments (JAX's own
tracing: pytrees, static arguments, keyword arguments), writes the module as HLO text with its
source-location tables, compiles it with Systole for `config` and runs it on `device`: device
steps on the accelerator, host steps on Systole's CPU interpreter. Compiled programs are cached
per signature (argument tree, shapes, dtypes and static values).

Numerics: on bf16 configurations dots and convolutions round their operands to bf16 and
accumulate in f32 (XLA's DEFAULT precision on TPUs), so results differ from JAX on the CPU
(f32 throughout) by about 2^-8 relative to the largest value; int8 programs on int8
configurations are exact. docs/PYTHON.md has the tolerances the tests use.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import os
import threading
from typing import Any, Callable, Hashable, Iterable, Sequence

import numpy as np

import jax
import jax.numpy as jnp

import systole as _systole

__all__ = ["jit", "hlo_text", "Jitted", "train_step", "TrainStep", "train", "StepReport", "Trained", "fit", "fit_pod"]


def hlo_text(lowered: Any) -> str:
    """HLO text of a jax.stages.Lowered, with metadata and the FileNames / FunctionNames /
    FileLocations / StackFrames tables when this JAX can print them (so placement and errors
    can name the Python line), else JAX's plain HLO text."""
    computation = lowered.compiler_ir("hlo")
    try:
        from jaxlib import _hlo

        options = _hlo.HloPrintOptions()
        options.print_metadata = True
        options.print_large_constants = True
        return computation.as_hlo_module().to_string(options)
    except (ImportError, AttributeError):
        return computation.as_hlo_text(print_large_constants=True)


_devices: dict[tuple[str, str], _systole.Device] = {}
_devices_lock = threading.Lock()


def _open_device(device: str | _systole.Device, config: str) -> _systole.Device:
    """One Device per (uri, config) in the process: opening `rtl` builds a simulator."""
    if isinstance(device, _systole.Device):
        return device
    with _devices_lock:
        key = (device, config)
        if key not in _devices:
            _devices[key] = _systole.Device(device, config)
        return _devices[key]


def _leaf_array(x: Any) -> np.ndarray:
    """An argument leaf as the NumPy array JAX would see (Python scalars are weakly typed
    f32 / i32 under JAX's default 32-bit mode)."""
    if isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic):
        return np.asarray(jnp.asarray(x))
    return np.asarray(x)


class Jitted:
    """What `jit` returns: call it like `fn`. `program` and `stats` describe the last call,
    `report()` prints them; `lower(*args)` compiles without running."""

    def __init__(self, fn: Callable, device: str | _systole.Device, config: str,
                 static_argnums: Sequence[int], static_argnames: Sequence[str], fuse: bool):
        self._fn = fn
        self._device = device
        self._config = config
        self._static_argnums = tuple(sorted(int(i) for i in static_argnums))
        self._static_argnames = tuple(static_argnames)
        self._fuse = fuse
        self._jax_jit = jax.jit(fn, static_argnums=self._static_argnums,
                                static_argnames=self._static_argnames, keep_unused=True)
        self._cache: dict[Hashable, tuple[_systole.Program, Any]] = {}
        self._lock = threading.Lock()
        self.program: _systole.Program | None = None
        self.stats: dict[str, Any] | None = None
        functools.update_wrapper(self, fn)

    def _split(self, args: tuple, kwargs: dict) -> tuple[list, Any, Hashable]:
        n = len(args)
        statics = []
        for i in self._static_argnums:
            index = i if i >= 0 else n + i
            if not 0 <= index < n:
                raise ValueError(f"static_argnums has {i} but {self.__name__} got {n} positional argument(s)")
            statics.append((index, args[index]))
        static_indices = {i for i, _ in statics}
        dynamic_args = tuple(a for i, a in enumerate(args) if i not in static_indices)
        dynamic_kwargs = {k: v for k, v in kwargs.items() if k not in self._static_argnames}
        static_kwargs = tuple(sorted((k, v) for k, v in kwargs.items() if k in self._static_argnames))
        leaves, tree = jax.tree_util.tree_flatten((dynamic_args, dynamic_kwargs))
        arrays = [_leaf_array(x) for x in leaves]
        try:
            key = (tree, tuple((a.shape, str(a.dtype)) for a in arrays), tuple(statics), static_kwargs)
            hash(key)
        except TypeError as e:
            raise TypeError(f"static arguments of {self.__name__} must be hashable: {e}") from None
        return arrays, tree, key

    def lower(self, *args: Any, **kwargs: Any) -> _systole.Program:
        """Lowers and compiles for these arguments (cached), without running."""
        _, _, key = self._split(args, kwargs)
        return self._compiled(key, args, kwargs)[0]

    def _compiled(self, key: Hashable, args: tuple, kwargs: dict) -> tuple[_systole.Program, Any]:
        with self._lock:
            entry = self._cache.get(key)
        if entry is None:
            lowered = self._jax_jit.lower(*args, **kwargs)
            name = getattr(self._fn, "__name__", "fn")
            program = _systole.compile(hlo_text(lowered), config=self._config, fuse=self._fuse,
                                       name=f"jax:{name}")
            entry = (program, lowered.out_tree)
            with self._lock:
                self._cache.setdefault(key, entry)
        return entry

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        arrays, _, key = self._split(args, kwargs)
        program, out_tree = self._compiled(key, args, kwargs)
        device = _open_device(self._device, self._config)
        result = device.run(program, arrays)
        self.program, self.stats = program, result.stats
        return jax.tree_util.tree_unflatten(out_tree, result.outputs)

    @property
    def cache_size(self) -> int:
        """Compiled signatures held."""
        return len(self._cache)

    @property
    def placement(self) -> list[dict[str, Any]]:
        """Where each step of the last call's program ran (Program.placement)."""
        if self.program is None:
            raise RuntimeError(f"{self.__name__} has not been called yet")
        return self.program.placement

    @property
    def estimated_cycles(self) -> int:
        """The static cycle estimate of the last call's program."""
        if self.program is None:
            raise RuntimeError(f"{self.__name__} has not been called yet")
        return self.program.cycles

    def report(self) -> str:
        """The last call: placement (device / host, with the Python source line), the static
        estimate, and what the device counted."""
        if self.program is None:
            raise RuntimeError(f"{self.__name__} has not been called yet")
        s = self.stats or {}
        device = self._device if isinstance(self._device, str) else self._device.uri
        return (f"{self.__name__} on {device} ({self.program.config}):\n{self.program.placement_table()}\n"
                f"device counted {s.get('cycles', 0)} cycles, MXU utilization "
                f"{100 * s.get('mxu_utilization', 0.0):.1f}%, {s.get('device_steps', 0)} device step(s), "
                f"{s.get('host_steps', 0)} host step(s)")

    def __repr__(self) -> str:
        return f"<systole.jax.jit of {self.__name__} on {self._device!r} ({self._config})>"


def jit(fn: Callable | None = None, *, device: str | _systole.Device = "ref", config: str = "small",
        static_argnums: int | Sequence[int] = (), static_argnames: str | Sequence[str] = (),
        fuse: bool = True) -> Any:
    """Returns `fn` compiled for Systole (usable as a decorator, with or without arguments).

    device: a URI ("ref", "rtl", "tcp://HOST:PORT", ...) or an open systole.Device.
    config: the configuration to compile for ("small": 16x16 bf16; "small-int8"; ...).
    static_argnums / static_argnames: as for jax.jit (hashable values, part of the cache key).
    """
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)
    if isinstance(static_argnames, str):
        static_argnames = (static_argnames,)
    if fn is None:
        return lambda f: Jitted(f, device, config, static_argnums, static_argnames, fuse)
    return Jitted(fn, device, config, static_argnums, static_argnames, fuse)


class TrainStep:
    """What `train_step` returns: a JAX training step compiled once, its state (parameters and
    optimizer state, the first `state_argnums` arguments, donated) kept on the Systole side
    between calls. Call it with a batch; it returns the step's other outputs (loss, metrics) as
    NumPy values. `state` is the current state in the structure `init` was given."""

    def __init__(self, fn: Callable, state: Any, example_batch: Sequence[Any], device: str | _systole.Device,
                 config: str):
        leaves, self._state_tree = jax.tree_util.tree_flatten(state)
        n_state = len(state) if isinstance(state, tuple) else 1
        args = tuple(state) if isinstance(state, tuple) else (state,)
        lowered = jax.jit(fn, donate_argnums=tuple(range(n_state)), keep_unused=True).lower(*args, *example_batch)
        name = getattr(fn, "__name__", "train_step")
        # The state in device memory where the compiler can place its update there, as `systole train`.
        self.program = _systole.compile(hlo_text(lowered), config=config, name=f"jax:{name}", device_state=True)
        self._device = _open_device(device, config)
        self._session = _systole._systole.TrainingSession(self._device._native, self.program._native,
                                                         [np.asarray(x) for x in leaves])
        self._n_state = n_state
        self.cycles = 0
        # Device memory written and read through the link by the steps so far: the programs
        # (loaded by the first step only), the device steps' operands and their results.
        self.link_bytes = {"programs": 0, "operands": 0, "results": 0}

    def __call__(self, *batch: Any) -> list[Any]:
        result = self._session.step([np.asarray(x) for x in batch])
        self.cycles += int(result["cycles"])
        for key in self.link_bytes:
            self.link_bytes[key] += int(result[key[:-1] + "_bytes"])
        return [np.float32(m) for m in result["metrics"]]

    @property
    def state(self) -> Any:
        leaves = self._session.state
        state = jax.tree_util.tree_unflatten(self._state_tree, leaves)
        return state

    @state.setter
    def state(self, value: Any) -> None:
        self._session.state = [np.asarray(x) for x in jax.tree_util.tree_leaves(value)]

    @property
    def batch_size(self) -> int:
        return int(self._session.batch_size)


def train_step(fn: Callable, state: Any, example_batch: Sequence[Any], *, device: str | _systole.Device = "ref",
               config: str = "small") -> TrainStep:
    """Compiles `fn(*state, *batch) -> (*new_state, loss, metrics…)` for Systole with the state
    donated and returns a TrainStep holding `state` (a tuple of pytrees, one per leading
    argument of `fn`). The state then stays with the runtime; each call passes only a batch
    shaped like `example_batch` and returns the loss and metrics (docs/TRAINING.md)."""
    return TrainStep(fn, state, example_batch, device, config)


@dataclasses.dataclass
class StepReport:
    """What `train` tells its `on_step` callback after every step."""
    step: int              # steps done, from 1
    metrics: list[Any]     # the step's outputs besides the state: the loss first, then e.g. accuracy
    cycles: int            # device cycles of the training steps so far
    link_bytes: dict[str, int]  # TrainStep.link_bytes so far: programs, operands, results


@dataclasses.dataclass
class Trained:
    """What `train` returns."""
    state: Any             # the trained state as NumPy arrays, in the structure `state` was given
    losses: np.ndarray     # every step's loss (float32)
    metrics: np.ndarray    # every step's metrics, [steps, metrics] (float32); column 0 is the loss
    cycles: int            # device cycles of all steps
    link_bytes: dict[str, int]  # TrainStep.link_bytes after the last step


def train(fn: Callable, state: Any, batches: Iterable[Sequence[Any]], *, device: str | _systole.Device = "ref",
          config: str = "small", on_step: Callable[[StepReport], None] | None = None) -> Trained:
    """Trains on Systole: compiles `fn(*state, *batch) -> (*new_state, loss, metrics…)` once with
    the state donated (`train_step`, shaped by the first batch), runs it on every batch of
    `batches` in order (for epochs, pass the batches of every epoch) with the state kept by the
    runtime between steps, calls `on_step` after each step and returns the trained state and the
    history. A batch shaped unlike the step's parameters raises ValueError naming the step."""
    iterator = iter(batches)
    first = next(iterator, None)
    if first is None:
        raise ValueError("systole.jax.train: `batches` is empty")
    step = train_step(fn, state, tuple(first), device=device, config=config)
    history = []
    for index, batch in enumerate(itertools.chain([first], iterator), start=1):
        try:
            metrics = step(*batch)
        except ValueError as error:
            raise ValueError(f"systole.jax.train: step {index}: {error}") from error
        history.append(metrics)
        if on_step is not None:
            on_step(StepReport(index, metrics, step.cycles, dict(step.link_bytes)))
    table = np.asarray(history, np.float32)
    return Trained(step.state, table[:, 0].copy(), table, step.cycles, dict(step.link_bytes))


def _shaped(array: Any, rows: int | None = None, steps: int | None = None) -> jax.ShapeDtypeStruct:
    """What lowering needs of an array: its shape (with `rows` rows, stacked `steps` times when
    given) and JAX's dtype for it."""
    array = np.asarray(array) if not hasattr(array, "shape") else array
    shape = tuple(array.shape) if rows is None else (rows, *array.shape[1:])
    if steps is not None:
        shape = (steps, *shape)
    return jax.ShapeDtypeStruct(shape, jax.dtypes.canonicalize_dtype(array.dtype))


def fit(fn: Callable, state: Any, data: str | os.PathLike | Sequence[Any], *, batch_size: int,
        eval_fn: Callable | None = None, eval_state: int = 1, device: str | _systole.Device = "ref",
        config: str = "small", epochs: int = 30, target_accuracy: float = 0.0, seed: int = 17,
        max_steps: int = 0, checkpoint: str | os.PathLike | None = None, resume: str | os.PathLike | None = None,
        on_progress: Callable[[_systole.TrainProgress], None] | None = None,
        verbose: bool = False, steps_per_launch: int | None = None) -> _systole.TrainSummary:
    """Trains `fn(*state, *batch) -> (*new_state, loss, metrics…)` on Systole as `systole train`
    does (systole.Trainer): epochs of batches of `batch_size` rows shuffled from `seed`, the
    test accuracy from `eval_fn(*state[:eval_state], *test_arrays) -> accuracy` after each epoch,
    checkpoints (`checkpoint`, `resume`: the .npz files `systole train` writes and reads), and
    the time to `target_accuracy` in device cycles, seconds at the configuration's clock and wall
    time. `state` is a tuple of pytrees, one per leading argument of `fn` (donated: the runtime
    keeps it between steps); `data` the training arrays then the test arrays, one of each per
    batch argument of `fn` (or a DATA.npz file holding them as arr_0, arr_1, …). `fn` and
    `eval_fn` are lowered once, for these shapes. Returns the summary, its `state` in the
    structure `state` was given. With `steps_per_launch=k`, `fn` runs k steps in one program (a
    `lax.fori_loop` or `lax.scan`) on batches stacked [k, batch_size, …] and returns its metrics
    as [k]: it is lowered for those shapes and fed the same batches, k at a time (docs/TRAINING.md,
    "Several steps per launch")."""
    states, arrays = _fit_inputs("fit", state, data)
    n = len(arrays) // 2
    # The state in device memory where the update can go there, as `systole train`.
    step = _compile_lowered(jax.jit(fn, donate_argnums=tuple(range(len(states))), keep_unused=True).lower(
        *states, *(_shaped(a, batch_size, steps_per_launch) for a in arrays[:n])), fn, config, device_state=True)
    trainer = _systole.Trainer(step, _leaves(states),
                               eval=_eval_program(eval_fn, states[:eval_state], arrays[n:], config),
                               device=_open_device(device, config), config=config)
    return _fit(trainer, states, data, epochs=epochs, target_accuracy=target_accuracy, seed=seed,
                max_steps=max_steps, checkpoint=checkpoint, resume=resume, on_progress=on_progress, verbose=verbose)


def fit_pod(grad_fn: Callable, apply_fn: Callable, state: Any, data: str | os.PathLike | Sequence[Any], *,
            batch_size: int, shards: int, device: str | Sequence[str | _systole.Device], grad_state: int = 1,
            eval_fn: Callable | None = None, eval_state: int = 1, config: str = "small", link_gbps: float = 100.0,
            link_latency_us: float = 1.0, epochs: int = 30, target_accuracy: float = 0.0, seed: int = 17,
            max_steps: int = 0, checkpoint: str | os.PathLike | None = None,
            resume: str | os.PathLike | None = None,
            on_progress: Callable[[_systole.TrainProgress], None] | None = None,
            verbose: bool = False, pod_processes: int | None = None, pod_index: int | None = None,
            pod_rendezvous: str | os.PathLike | None = None,
            pod_address: str | None = None, pod_interface: str | None = None) -> _systole.TrainSummary:
    """`fit` on a pod (docs/TRAINING.md, "Pods"): each step's global batch of `batch_size` rows is
    cut into `shards` micro-batches spread over the devices (`device`: a pod's name, a
    comma-separated list or a list of URIs and Devices); `grad_fn(*state[:grad_state], *batch)
    -> (gradients, loss, metrics…)` runs on each, the gradients are exchanged through Gloo and
    summed in shard order, and `apply_fn(*state, gradients) -> new state` (the state donated)
    updates every replica. Bit-identical for any number of devices. A pod across processes:
    `pod_processes`, `pod_index` (under mpirun, the launcher's), `pod_rendezvous`, `pod_address` or
    `pod_interface`, as `systole.Trainer` takes them; every process runs fit_pod with its own devices."""
    if shards <= 0 or batch_size % shards != 0:
        raise ValueError(f"systole.jax.fit_pod: {shards} shards do not divide a batch of {batch_size} rows")
    states, arrays = _fit_inputs("fit_pod", state, data)
    n = len(arrays) // 2
    grad = _compile_lowered(jax.jit(grad_fn, keep_unused=True).lower(
        *states[:grad_state], *(_shaped(a, batch_size // shards) for a in arrays[:n])), grad_fn, config)
    apply = _compile_lowered(jax.jit(apply_fn, donate_argnums=tuple(range(len(states))), keep_unused=True).lower(
        *states, *states[:grad_state]), apply_fn, config)
    # URIs open a Device each (not jit's shared one per URI): a pod's devices run at once.
    trainer = _systole.Trainer(grad=grad, apply=apply, init=_leaves(states),
                               eval=_eval_program(eval_fn, states[:eval_state], arrays[n:], config),
                               device=device, config=config, shards=shards, link_gbps=link_gbps,
                               link_latency_us=link_latency_us, pod_processes=pod_processes, pod_index=pod_index,
                               pod_rendezvous=pod_rendezvous, pod_address=pod_address,
                               pod_interface=pod_interface)
    return _fit(trainer, states, data, epochs=epochs, target_accuracy=target_accuracy, seed=seed,
                max_steps=max_steps, checkpoint=checkpoint, resume=resume, on_progress=on_progress, verbose=verbose)


def _fit_inputs(what: str, state: Any, data: Any) -> tuple[tuple, list[jax.ShapeDtypeStruct]]:
    """The state as a tuple of pytrees, and the data's arrays as shapes (read from DATA.npz if a path)."""
    states = tuple(state) if isinstance(state, tuple) else (state,)
    if isinstance(data, (str, os.PathLike)):
        with np.load(data) as npz:
            arrays = [_shaped(npz[f"arr_{i}"]) for i in range(len(npz.files))]
    else:
        arrays = [_shaped(a) for a in data]
    if len(arrays) == 0 or len(arrays) % 2 != 0:
        raise ValueError(f"systole.jax.{what}: data has {len(arrays)} arrays: give the training arrays, then as "
                         "many test arrays")
    return states, arrays


def _leaves(states: tuple) -> list[np.ndarray]:
    return [np.asarray(x) for x in jax.tree_util.tree_leaves(states)]


def _compile_lowered(lowered: Any, fn: Callable, config: str, device_state: bool = False) -> _systole.Program:
    return _systole.compile(hlo_text(lowered), config=config, name=f"jax:{getattr(fn, '__name__', 'fn')}",
                            device_state=device_state)


def _eval_program(eval_fn: Callable | None, states: tuple, test: list, config: str) -> _systole.Program | None:
    if eval_fn is None:
        return None
    return _compile_lowered(jax.jit(eval_fn, keep_unused=True).lower(*states, *test), eval_fn, config)


def _fit(trainer: _systole.Trainer, states: tuple, data: Any, **options: Any) -> _systole.TrainSummary:
    summary = trainer.train(data, **options)
    summary.state = jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(states), summary.state)
    return summary
