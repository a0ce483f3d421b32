"""Training to a target accuracy from Python: `systole.Trainer` runs the loop `systole train`
runs — the same C++ (runtime::TrainLoop over one device or a pod, bound as
systole._systole.Trainer), so the two front ends train alike, bit for bit, and read each other's
checkpoints (docs/TRAINING.md).

    trainer = systole.Trainer("mlp_sgd_step.hlo", "mlp_sgd_init.npz", eval="mlp_eval.hlo")
    summary = trainer.train("digits.npz", epochs=30, target_accuracy=0.97,
                            checkpoint="ckpt.npz", verbose=True)
    summary.time_to_accuracy       # steps, device cycles, seconds at the clock, wall seconds

What JAX users lower themselves goes through `systole.jax.fit`, which builds a Trainer.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from . import Device, Program, _host_array, _looks_like_hlo, _systole
from . import compile as _compile

__all__ = ["Trainer", "TrainProgress", "TrainSummary", "TimeToAccuracy"]

PathLike = str | os.PathLike


@dataclasses.dataclass
class TrainProgress:
    """What `Trainer.train` tells its `on_progress` callback after every step and every epoch."""
    epoch_end: bool              # False: one step's report; True: the epoch's (after its evaluation)
    step: int                    # steps done in total, from 1 (counting those before a resume)
    epoch: int                   # the 1-based epoch the step belongs to
    metrics: list[float]         # the step's metrics (loss, accuracy, …); at an epoch's end the epoch's means
    test_accuracy: float | None  # at an epoch's end, with an evaluation program
    device_cycles: int           # the training steps' device cycles so far (counting those before a resume)
    device_seconds: float        # the same at the configuration's clock
    wall_seconds: float          # since this run started
    line: str                    # at an epoch's end, the line `systole train` prints for it

    @property
    def loss(self) -> float:
        return self.metrics[0]


@dataclasses.dataclass
class TimeToAccuracy:
    """When the target accuracy was first reached (it is checked after each epoch)."""
    steps: int
    device_cycles: int
    device_seconds: float        # device_cycles at the configuration's clock
    wall_seconds: float


@dataclasses.dataclass
class TrainSummary:
    """What `Trainer.train` returns; `str(summary)` is the summary `systole train` prints."""
    steps: int                   # steps done in total (counting those before a resume)
    epochs: int                  # epochs this run finished
    losses: np.ndarray           # every step this run made (float64)
    test_accuracies: list[float]  # after each epoch this run finished
    final_test_accuracy: float | None
    device_cycles: int           # training steps only (not the host steps nor the evaluation)
    device_seconds: float        # device_cycles at clock_mhz
    wall_seconds: float
    clock_mhz: int               # the configuration's clock
    link_bytes: dict[str, int]   # programs, operands, results the steps moved through the link(s)
    target_accuracy: float
    reached_target: bool
    time_to_accuracy: TimeToAccuracy | None
    pod: dict[str, Any] | None   # a pod's devices and last step's cycles per device and for the exchange
    state: Any                   # the state after the run: arrays (Trainer) or the pytrees (systole.jax.fit)
    text: str = dataclasses.field(repr=False, default="")

    def __str__(self) -> str:
        return self.text


def _existing(path: PathLike, what: str) -> str:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such {what}")
    return os.fspath(path)


def _arrays_or_path(value: Any, what: str) -> Any:
    """An .npz path (checked) as a str, or arrays as the C++ side takes them."""
    if isinstance(value, (str, os.PathLike)):
        return _existing(value, f"{what} file (.npz)")
    if isinstance(value, np.ndarray) or not isinstance(value, Sequence):
        raise TypeError(f"{what}: a path to an .npz file or a sequence of arrays, not {type(value).__name__}")
    return [_host_array(a) for a in value]


def _program(value: Program | PathLike, config: str, what: str, device_state: bool = False) -> Program:
    if isinstance(value, Program):
        return value
    if isinstance(value, os.PathLike) or (isinstance(value, str) and not _looks_like_hlo(value)):
        _existing(value, f"{what} program (HLO text file)")
    return _compile(value, config, device_state=device_state)


def _open(device: str | Device, config: str) -> Device:
    return device if isinstance(device, Device) else Device(device, config)


class Trainer:
    """A training run's programs, devices and state, with the loop of `systole train`.

    `device` is a URI, a name from devices.toml, a comma-separated list of either, an open
    Device or a list of URIs and Devices (as `systole train --device`; none: SYSTOLE_DEVICE,
    else "ref"). One device: `step` is a training step whose state is donated (HLO with
    input_output_alias, what `jax.jit(step, donate_argnums=…)` writes), `init` its initial
    state. A pod: `grad` and `apply` instead of `step` (docs/TRAINING.md, "Pods"), several devices,
    `shards` micro-batches per step (default one per device), the exchange modelled over a link
    of `link_gbps` and `link_latency_us`; `init` is then the update program's state.

    A pod across processes (docs/TRAINING.md, "Pods across processes"), as `systole train`'s
    --pod-processes, --pod-index, --pod-rendezvous, --pod-address and --pod-interface:
    `pod_processes` Python processes, each with as many devices, this one `pod_index`, meeting in
    `pod_rendezvous` (a new, empty directory all of them reach), its ranks listening on
    `pod_address`, or on this host's IPv4 address on the network interface `pod_interface` (the
    same keyword on every host reads each host's own), else on 127.0.0.1. Left as None, the
    count and the index are mpirun's when it launched this process (else a pod of this process
    alone); given under mpirun, they must agree with it. The first process writes the checkpoint
    and prints when `verbose`.

    Programs are a systole.Program, an HLO file's path or HLO text, compiled for `config` (by
    default the configuration of `device` when it is an open Device, else "small"). `eval`
    computes the test accuracy from the first state values and the test arrays. `init` is an
    .npz file (one array per state value, in order) or a sequence of arrays.
    """

    def __init__(self, step: Program | PathLike | None = None, init: PathLike | Sequence[Any] | None = None, *,
                 eval: Program | PathLike | None = None, grad: Program | PathLike | None = None,
                 apply: Program | PathLike | None = None,
                 device: str | Device | Sequence[str | Device] | None = None,
                 config: str | None = None, shards: int = 0, link_gbps: float = 100.0,
                 link_latency_us: float = 1.0, pod_processes: int | None = None, pod_index: int | None = None,
                 pod_rendezvous: PathLike | None = None, pod_address: str | None = None,
                 pod_interface: str | None = None):
        pod = grad is not None or apply is not None
        if pod == (step is not None) or (grad is None) != (apply is None):
            raise ValueError("give either a training step or, for a pod, grad and apply")
        if init is None:
            raise ValueError("init: the initial state (an .npz file or arrays) is needed")
        if device is None or isinstance(device, str):
            # A URI, a name from devices.toml or a comma-separated list; none: SYSTOLE_DEVICE, else ref.
            devices = list(_systole.resolve_device(device or "")["uris"])
        else:
            devices = list(device) if isinstance(device, (list, tuple)) else [device]
        if not devices:
            raise ValueError("device: at least one device is needed")
        if config is None:
            config = devices[0].config if isinstance(devices[0], Device) else "small"
        if not pod and len(devices) != 1:
            raise ValueError(f"{len(devices)} devices train a pod: give grad and apply instead of a step")
        self.config = config
        self.devices = [_open(d, config) for d in devices]
        self.eval = _program(eval, config, "evaluation") if eval is not None else None
        state = _arrays_or_path(init, "init")
        native_eval = self.eval._native if self.eval is not None else None
        if pod:
            self.grad = _program(grad, config, "gradient")
            self.apply = _program(apply, config, "update")
            self.step = None
            self._native = _systole.Trainer.pod([d._native for d in self.devices], self.grad._native,
                                                self.apply._native, native_eval, state, int(shards),
                                                float(link_gbps), float(link_latency_us), pod_processes, pod_index,
                                                os.fspath(pod_rendezvous) if pod_rendezvous is not None else "",
                                                pod_address or "", pod_interface or "")
        else:
            # As `systole train`: the state in device memory where the update can go there.
            self.step = _program(step, config, "training step", device_state=True)
            self.grad = self.apply = None
            self._native = _systole.Trainer.on_device(self.devices[0]._native, self.step._native, native_eval, state,
                                                      pod_processes, pod_index)

    @property
    def batch_size(self) -> int:
        """Rows per step (a pod's global batch)."""
        return int(self._native.batch_size)

    @property
    def steps_per_launch(self) -> int:
        """Steps one launch runs: 1, or k for a step in a lax.fori_loop or lax.scan over batches
        stacked [k, batch, …] whose metrics are [k] (docs/TRAINING.md, "Several steps per launch";
        `max_steps` and the epochs must then make whole launches)."""
        return int(self._native.steps_per_launch)

    @property
    def pod_processes(self) -> int:
        """Processes in the pod (given, or mpirun's; 1: this process alone)."""
        return int(self._native.pod_processes)

    @property
    def pod_index(self) -> int:
        """This process's index in the pod (0 … pod_processes − 1)."""
        return int(self._native.pod_index)

    @property
    def clock_mhz(self) -> int:
        """The configuration's clock, which device seconds are counted at."""
        return int(self._native.clock_mhz)

    @property
    def state(self) -> list[np.ndarray]:
        """The state arrays, in the donated parameters' order (a pod's: its replicas agree)."""
        return list(self._native.state)

    @state.setter
    def state(self, arrays: PathLike | Sequence[Any]) -> None:
        self._native.state = _arrays_or_path(arrays, "state")

    def evaluate(self, test: Sequence[Any]) -> float:
        """The evaluation program's accuracy of the current state on `test` (the test arrays)."""
        return float(self._native.evaluate([_host_array(a) for a in test]))

    def load_checkpoint(self, path: PathLike) -> dict[str, int]:
        """Makes the checkpoint's state the current one; returns its `steps` and `device_cycles`.
        A checkpoint of another model raises systole.Error naming the file and the array."""
        return dict(self._native.load_checkpoint(_existing(path, "checkpoint file (.npz)")))

    def save_checkpoint(self, path: PathLike, steps: int = 0, device_cycles: int = 0) -> None:
        """Writes the current state as a checkpoint (arr_0 = [steps, device_cycles], then the state)."""
        self._native.save_checkpoint(os.fspath(path), int(steps), int(device_cycles))

    def train(self, data: PathLike | Sequence[Any], *, epochs: int = 30, target_accuracy: float = 0.0,
              seed: int = 17, max_steps: int = 0, checkpoint: PathLike | None = None,
              resume: PathLike | None = None, on_progress: Callable[[TrainProgress], None] | None = None,
              verbose: bool = False) -> TrainSummary:
        """Trains as `systole train` does: epochs of batches shuffled from `seed` (the last partial
        batch dropped), the test accuracy after each epoch when there is an evaluation program,
        until `epochs` epochs, `max_steps` steps in total (0: no limit) or `target_accuracy` (0:
        none). `data` is a DATA.npz file or the arrays it holds: the training arrays, then the
        test arrays, one of each per batch parameter. `checkpoint` is written after every epoch
        and at the end; `resume` starts from a checkpoint (of this run or of `systole train`),
        in the middle of an epoch too, and continues bit-identically to a run that never stopped.
        `on_progress` hears about every step and epoch; `verbose` prints each epoch's line and
        the summary as `systole train` does. In a pod across processes only the first process
        writes `checkpoint` and prints. Returns the summary; the trainer keeps the state."""
        if not 0.0 <= target_accuracy <= 1.0:
            raise ValueError(f"target_accuracy {target_accuracy} is not within 0 … 1")
        dataset = _arrays_or_path(data, "data")
        resume_path = _existing(resume, "checkpoint file (.npz) to resume from") if resume is not None else ""
        verbose = verbose and self.pod_index == 0
        callback = None
        if on_progress is not None or verbose:
            def callback(raw: dict[str, Any]) -> None:
                progress = TrainProgress(**raw)
                if verbose and progress.epoch_end:
                    print(progress.line, flush=True)
                if on_progress is not None:
                    on_progress(progress)
        raw = self._native.train(dataset, int(epochs), float(target_accuracy), int(seed), int(max_steps),
                                 os.fspath(checkpoint) if checkpoint is not None else "", resume_path, callback)
        reached = raw["time_to_accuracy"]
        summary = TrainSummary(
            steps=raw["steps"], epochs=raw["epochs"], losses=np.asarray(raw["losses"], np.float64),
            test_accuracies=list(raw["test_accuracies"]), final_test_accuracy=raw["final_test_accuracy"],
            device_cycles=raw["device_cycles"], device_seconds=raw["device_seconds"],
            wall_seconds=raw["wall_seconds"], clock_mhz=raw["clock_mhz"], link_bytes=dict(raw["link_bytes"]),
            target_accuracy=raw["target_accuracy"], reached_target=raw["reached_target"],
            time_to_accuracy=TimeToAccuracy(**reached) if reached is not None else None,
            pod=dict(raw["pod"]) if raw["pod"] is not None else None, state=self.state, text=raw["text"])
        if verbose:
            print(f"\n{summary.text}", end="", flush=True)
            if checkpoint is not None:
                print(f"checkpoint: {os.fspath(checkpoint)}", flush=True)
        return summary

    def __repr__(self) -> str:
        what = f"pod of {len(self.devices)}" if self.grad is not None else self.devices[0].uri
        program = (self.grad or self.step).source_name
        launch = f", {self.steps_per_launch} steps per launch" if self.steps_per_launch != 1 else ""
        return f"<systole.Trainer {program!r} on {what} ({self.config}), batch {self.batch_size}{launch}>"
