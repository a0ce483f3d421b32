"""systole.Trainer and systole.jax.fit: the loop of `systole train` from Python (evaluation after
each epoch, checkpoints and resume, time to a target accuracy, progress, pods), checked against
the `systole` command itself on examples/training's fixtures — same data, initial state and
seed, so the same losses, accuracies, cycles and state bits."""
import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import jax
import numpy as np
import pytest

import systole
import systole.jax

from conftest import SOURCE_DIR

FIXTURES = SOURCE_DIR / "examples" / "training"
STEP, EVAL, INIT, DATA = (FIXTURES / name for name in ("mlp_sgd_step.hlo", "mlp_eval.hlo", "mlp_sgd_init.npz",
                                                       "digits.npz"))
# The MLP reaches 91.67 % test accuracy after epoch 2 (88 steps), so a target of 90 % in at most
# 3 epochs stops there: the runs below are 2 epochs, well under a second each on ref.
TARGET, EPOCHS, STEPS = 0.9, 3, 88


def systole_command():
    command = os.environ.get("SYSTOLE_COMMAND") or str(SOURCE_DIR / "build" / "cli" / "systole")
    if not Path(command).is_file():
        pytest.skip(f"no `systole` command at {command} (CTest sets SYSTOLE_COMMAND)")
    return command


def train_command(*args):
    """`systole train` on the MLP fixtures; returns its stdout."""
    run = subprocess.run([systole_command(), "train", str(STEP), "--data", str(DATA), "--init", str(INIT),
                          "--eval", str(EVAL), *map(str, args)], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    return run.stdout


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The command's run to 90 %: its JSON summary, every loss, the final checkpoint; and its
    checkpoint after 50 steps (the middle of epoch 2)."""
    out = tmp_path_factory.mktemp("command")
    summary = json.loads(train_command("--epochs", EPOCHS, "--target-accuracy", TARGET, "--checkpoint",
                                       out / "final.npz", "--losses", out / "losses.npz", "--json"))
    train_command("--steps", 50, "--checkpoint", out / "step50.npz", "-q")
    epoch_lines, summary_text = train_command("--epochs", EPOCHS, "--target-accuracy", TARGET).split("\n\n", 1)
    return dict(summary=summary, losses=np.load(out / "losses.npz")["arr_0"], final=out / "final.npz",
                step50=out / "step50.npz", summary_text=summary_text, epoch_lines=epoch_lines.splitlines())


def npz(path):
    with np.load(path) as archive:
        return [archive[f"arr_{i}"] for i in range(len(archive.files))]


def assert_same_checkpoint(ours, theirs):
    a, b = npz(ours), npz(theirs)
    assert len(a) == len(b)
    for i, (x, y) in enumerate(zip(a, b)):
        assert x.dtype == y.dtype and np.array_equal(x, y), f"arr_{i} differs"


def without_wall(line):
    return re.sub(r"wall \d+\.\d s", "wall _", line)


def test_trainer_trains_as_systole_train_does(reference, tmp_path, capsys):
    trainer = systole.Trainer(STEP, INIT, eval=EVAL, device="ref")
    assert trainer.batch_size == 32 and trainer.clock_mhz == 500
    reports = []
    summary = trainer.train(DATA, epochs=EPOCHS, target_accuracy=TARGET, checkpoint=tmp_path / "final.npz",
                            on_progress=reports.append, verbose=True)
    command = reference["summary"]

    # Bit-identical to the command: every loss, the accuracies, the cycles, the link bytes, the
    # state and the checkpoint file.
    np.testing.assert_array_equal(summary.losses.astype(np.float32), reference["losses"])
    assert summary.steps == command["steps"] == STEPS and summary.epochs == command["epochs"] == 2
    assert summary.test_accuracies == command["test_accuracies"]
    assert summary.final_test_accuracy == command["final_test_accuracy"]
    assert summary.device_cycles == command["device_cycles"]
    assert summary.device_seconds == pytest.approx(command["device_seconds"])
    assert summary.link_bytes == command["link_bytes"]
    assert_same_checkpoint(tmp_path / "final.npz", reference["final"])
    for ours, theirs in zip(summary.state, npz(reference["final"])[1:]):
        np.testing.assert_array_equal(ours, theirs)

    # The time to accuracy, in device cycles, seconds at the clock and wall time.
    assert summary.reached_target and command["reached_target"]
    tta = summary.time_to_accuracy
    assert (tta.steps, tta.device_cycles) == (command["time_to_accuracy"]["steps"],
                                               command["time_to_accuracy"]["device_cycles"])
    assert tta.device_seconds == pytest.approx(tta.device_cycles / 500e6)
    assert 0 < tta.wall_seconds <= summary.wall_seconds

    # Progress after every step and every epoch; the epoch lines and the summary are the command's.
    steps = [r for r in reports if not r.epoch_end]
    epochs = [r for r in reports if r.epoch_end]
    assert [r.step for r in steps] == list(range(1, STEPS + 1))
    assert [r.loss for r in steps] == list(summary.losses)
    assert all(0 <= r.metrics[1] <= 1 and r.test_accuracy is None for r in steps)
    assert all(b.device_cycles > a.device_cycles for a, b in zip(steps, steps[1:]))
    assert [(r.epoch, r.step, r.test_accuracy) for r in epochs] == [(1, 44, summary.test_accuracies[0]),
                                                                    (2, 88, summary.test_accuracies[1])]
    printed = capsys.readouterr().out
    epoch_lines = [line for line in printed.splitlines() if line.startswith("epoch")]
    assert [without_wall(line) for line in epoch_lines] == [without_wall(r.line) for r in epochs]
    assert [without_wall(line) for line in epoch_lines] == \
        [without_wall(line) for line in reference["epoch_lines"] if line.startswith("epoch")]
    assert without_wall(str(summary)) == without_wall(reference["summary_text"])
    assert "time to 90.0% test accuracy: 88 steps" in printed

    # The trainer keeps the state; evaluating it again gives the last epoch's accuracy.
    data = npz(DATA)
    assert trainer.evaluate(data[2:]) == summary.final_test_accuracy


def test_a_resumed_run_is_bit_identical_to_one_that_never_stopped(reference, tmp_path):
    first = systole.Trainer(STEP, INIT, eval=EVAL)
    stopped = first.train(DATA, epochs=EPOCHS, max_steps=30, checkpoint=tmp_path / "step30.npz")
    assert stopped.steps == 30 and stopped.epochs == 0 and not stopped.reached_target
    assert npz(tmp_path / "step30.npz")[0].tolist() == [30, stopped.device_cycles]

    # A new trainer (a new process, as far as the state goes) resumes in the middle of epoch 1.
    second = systole.Trainer(STEP, INIT, eval=EVAL)
    resumed = second.train(DATA, epochs=EPOCHS, target_accuracy=TARGET, resume=tmp_path / "step30.npz",
                           checkpoint=tmp_path / "final.npz")
    np.testing.assert_array_equal(resumed.losses.astype(np.float32), reference["losses"][30:])
    assert resumed.steps == STEPS and resumed.device_cycles == reference["summary"]["device_cycles"]
    assert resumed.time_to_accuracy.device_cycles == reference["summary"]["time_to_accuracy"]["device_cycles"]
    assert_same_checkpoint(tmp_path / "final.npz", reference["final"])


def test_checkpoints_pass_between_python_and_the_command(reference, tmp_path):
    # The command's checkpoint after 50 steps, resumed from Python.
    trainer = systole.Trainer(STEP, INIT, eval=EVAL)
    resumed = trainer.train(DATA, epochs=EPOCHS, target_accuracy=TARGET, resume=reference["step50"],
                            checkpoint=tmp_path / "from_command.npz")
    np.testing.assert_array_equal(resumed.losses.astype(np.float32), reference["losses"][50:])
    assert_same_checkpoint(tmp_path / "from_command.npz", reference["final"])

    # Python's checkpoint after 50 steps, resumed by the command.
    systole.Trainer(STEP, INIT, eval=EVAL).train(DATA, max_steps=50, checkpoint=tmp_path / "step50.npz")
    assert_same_checkpoint(tmp_path / "step50.npz", reference["step50"])
    train_command("--epochs", EPOCHS, "--target-accuracy", TARGET, "--resume", tmp_path / "step50.npz",
                  "--checkpoint", tmp_path / "from_python.npz", "-q")
    assert_same_checkpoint(tmp_path / "from_python.npz", reference["final"])

    # load_checkpoint / save_checkpoint round-trip a checkpoint exactly.
    info = trainer.load_checkpoint(reference["step50"])
    assert info["steps"] == 50 and info["device_cycles"] == npz(reference["step50"])[0][1]
    trainer.save_checkpoint(tmp_path / "again.npz", info["steps"], info["device_cycles"])
    assert_same_checkpoint(tmp_path / "again.npz", reference["step50"])


def load_fixtures():
    """examples/training/make_fixtures.py as a module: the JAX functions the fixtures were lowered from."""
    if "make_fixtures" not in sys.modules:
        spec = importlib.util.spec_from_file_location("make_fixtures", FIXTURES / "make_fixtures.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["make_fixtures"] = module
        spec.loader.exec_module(module)
    return sys.modules["make_fixtures"]


@pytest.fixture(scope="module")
def fixtures():
    return load_fixtures()


def test_jax_fit_lowers_the_step_and_evaluation_and_trains_as_the_command_does(fixtures, reference, tmp_path):
    f = fixtures
    params = f.init_params()
    state = (params, jax.tree.map(np.zeros_like, params))
    data = npz(DATA)  # arrays here; a DATA.npz path works too
    summary = systole.jax.fit(f.sgd_step, state, data, batch_size=f.BATCH, eval_fn=f.eval_accuracy,
                              epochs=EPOCHS, target_accuracy=TARGET, checkpoint=tmp_path / "final.npz")
    # JAX's lowering of make_fixtures.py's functions is the fixtures' HLO: bit-identical runs.
    np.testing.assert_array_equal(summary.losses.astype(np.float32), reference["losses"])
    assert summary.test_accuracies == reference["summary"]["test_accuracies"]
    assert summary.time_to_accuracy.steps == STEPS
    assert_same_checkpoint(tmp_path / "final.npz", reference["final"])
    new_params, momentum = summary.state  # the pytrees back, in the structure given
    assert len(new_params) == 4 and new_params[0].shape == (64, 64)
    np.testing.assert_array_equal(new_params[0], npz(reference["final"])[1])

    # Resumed from the command's checkpoint, through a DATA.npz path.
    resumed = systole.jax.fit(f.sgd_step, state, DATA, batch_size=f.BATCH, eval_fn=f.eval_accuracy,
                              epochs=EPOCHS, target_accuracy=TARGET, resume=reference["step50"])
    np.testing.assert_array_equal(resumed.losses.astype(np.float32), reference["losses"][50:])


def test_a_pod_from_python_is_the_command_s_pod(tmp_path, monkeypatch):
    common = ["--apply", FIXTURES / "mlp_sgd_apply.hlo", "--shards", 8, "--steps", 3]
    run = subprocess.run([systole_command(), "train", "--grad", str(FIXTURES / "mlp_grad.hlo"), "--data", str(DATA),
                          "--init", str(INIT), "--device", "ref,ref", "--checkpoint", str(tmp_path / "command.npz"),
                          "--json", *map(str, common)], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    command = json.loads(run.stdout)

    # The devices by name, as `systole train --device NAME` finds them (docs/TRAINING.md, "Device names").
    (tmp_path / "devices.toml").write_text('[devices]\nlittle-pod = ["ref", "ref"]\n')
    monkeypatch.setenv("SYSTOLE_DEVICES_FILE", str(tmp_path / "devices.toml"))
    assert systole.resolve_device("little-pod")["uris"] == ["ref", "ref"]
    trainer = systole.Trainer(grad=FIXTURES / "mlp_grad.hlo", apply=FIXTURES / "mlp_sgd_apply.hlo", init=INIT,
                              device="little-pod", shards=8)
    assert trainer.batch_size == 32 and len(trainer.devices) == 2
    summary = trainer.train(DATA, max_steps=3, checkpoint=tmp_path / "python.npz")
    assert_same_checkpoint(tmp_path / "python.npz", tmp_path / "command.npz")
    assert summary.steps == 3 and summary.device_cycles == command["device_cycles"]
    assert summary.pod["devices"] == 2
    assert summary.pod["device_cycles_per_step"] == command["pod"]["device_cycles_per_step"]
    assert summary.pod["exchange_cycles_per_step"] == command["pod"]["exchange_cycles_per_step"]

    # The same pod lowered from make_fixtures.py's JAX functions (grad, sgd_apply).
    f = load_fixtures()
    params = f.init_params()
    lowered = systole.jax.fit_pod(f.grad, f.sgd_apply, (params, jax.tree.map(np.zeros_like, params)), DATA,
                                  batch_size=32, shards=8, device="ref,ref", max_steps=3,
                                  checkpoint=tmp_path / "jax.npz")
    assert_same_checkpoint(tmp_path / "jax.npz", tmp_path / "command.npz")
    assert lowered.pod == summary.pod and len(lowered.state) == 2

    device = systole.Device("ref")
    with pytest.raises(ValueError, match=r"devices\[1\] is devices\[0\] again"):
        systole.Trainer(grad=FIXTURES / "mlp_grad.hlo", apply=FIXTURES / "mlp_sgd_apply.hlo", init=INIT,
                        device=[device, device], shards=8)


def test_errors_name_the_file_and_the_array(reference, tmp_path):
    with pytest.raises(FileNotFoundError, match="missing.npz: no such init file"):
        systole.Trainer(STEP, tmp_path / "missing.npz")
    with pytest.raises(FileNotFoundError, match="missing_eval.hlo: no such evaluation program"):
        systole.Trainer(STEP, INIT, eval=tmp_path / "missing_eval.hlo")
    trainer = systole.Trainer(STEP, INIT, eval=EVAL)
    with pytest.raises(FileNotFoundError, match="nowhere.npz: no such data file"):
        trainer.train(tmp_path / "nowhere.npz")
    with pytest.raises(FileNotFoundError, match="gone.npz: no such checkpoint file"):
        trainer.train(DATA, resume=tmp_path / "gone.npz")

    # A checkpoint of another model: the CNN's state has other shapes, and another count.
    header = np.array([10, 1000], np.int64)
    cnn_state = npz(FIXTURES / "cnn_sgd_init.npz")
    np.savez(tmp_path / "cnn.npz", header, *cnn_state)
    with pytest.raises(systole.Error, match=r"cnn\.npz: 13 arrays, but a checkpoint of this model has 9"):
        trainer.train(DATA, resume=tmp_path / "cnn.npz")
    mlp_state = npz(INIT)
    np.savez(tmp_path / "wrong_shape.npz", header, mlp_state[0][:, :32], *mlp_state[1:])
    with pytest.raises(systole.Error, match=r"wrong_shape\.npz: arr_1 has shape \[64, 32\], the state value is "
                                            r"f32\[64,64\]"):
        trainer.load_checkpoint(tmp_path / "wrong_shape.npz")
    np.savez(tmp_path / "no_header.npz", *mlp_state, mlp_state[0])
    with pytest.raises(systole.Error, match=r"no_header\.npz: arr_0 is not int64 \[2\]"):
        trainer.train(DATA, resume=tmp_path / "no_header.npz")
    (tmp_path / "not_a_zip.npz").write_text("hello")
    with pytest.raises(systole.Error, match="not_a_zip.npz"):
        trainer.train(DATA, resume=tmp_path / "not_a_zip.npz")

    # Data and state of the wrong shapes, as files and as arrays.
    data = npz(DATA)
    with pytest.raises(systole.Error, match=r"data: array 0 has shape \[1437, 63\], but its rows must be shaped like "
                                            r"f32\[32,64\]"):
        trainer.train([data[0][:, :63], *data[1:]])
    with pytest.raises(systole.Error, match=r"data: 2 arrays, but mlp_sgd_step.hlo takes 2 batch arrays"):
        trainer.train(data[:2])
    np.savez(tmp_path / "bad_data.npz", data[0], data[1][:, :9], *data[2:])
    with pytest.raises(systole.Error, match=r"bad_data\.npz: arr_1 has shape \[1437, 9\]"):
        trainer.train(tmp_path / "bad_data.npz")
    with pytest.raises(systole.Error, match=r"state: array 1 is \[65\], parameter 1 .* is f32\[64\]"):
        systole.Trainer(STEP, [mlp_state[0], np.zeros(65, np.float32), *mlp_state[2:]])
    with pytest.raises(systole.Error, match=r"cnn_sgd_init\.npz: 12 arrays, but mlp_sgd_step\.hlo has 8 state "
                                            r"parameters"):
        systole.Trainer(STEP, FIXTURES / "cnn_sgd_init.npz")
    np.savez(tmp_path / "bad_init.npz", *mlp_state[:3], mlp_state[3][:5], *mlp_state[4:])
    with pytest.raises(systole.Error, match=r"bad_init\.npz: arr_3 is \[5\], parameter 3 .* is f32\[10\]"):
        systole.Trainer(STEP, tmp_path / "bad_init.npz")
    with pytest.raises(TypeError, match="a path to an .npz file or a sequence of arrays"):
        trainer.train(42)

    # Misused trainers and devices.
    with pytest.raises(ValueError, match="no evaluation program"):
        systole.Trainer(STEP, INIT).evaluate(data[2:])
    with pytest.raises(ValueError, match="compiled for configuration 'small' but device ref is 'tiny'"):
        systole.Trainer(STEP, INIT, device=systole.Device("ref", config="tiny"), config="small")
    with pytest.raises(ValueError, match="either a training step or, for a pod, grad and apply"):
        systole.Trainer(STEP, INIT, grad=STEP)
    with pytest.raises(ValueError, match="2 devices train a pod"):
        systole.Trainer(STEP, INIT, device="ref,ref")
    with pytest.raises(ValueError, match="target_accuracy"):
        trainer.train(DATA, target_accuracy=97)


def test_a_failing_progress_callback_stops_the_run_and_leaves_the_trainer_usable(tmp_path):
    trainer = systole.Trainer(STEP, INIT, eval=EVAL)
    seen = []

    def stop_at_step_5(progress):
        seen.append([a.copy() for a in trainer.state])  # the callback may read the state
        with pytest.raises(ValueError, match="cannot train while the trainer is training"):
            trainer.train(DATA)
        if progress.step == 5:
            raise KeyboardInterrupt("stop")

    with pytest.raises(KeyboardInterrupt, match="stop"):
        trainer.train(DATA, on_progress=stop_at_step_5)
    assert len(seen) == 5
    # The state after step 5 stays, and the trainer trains on.
    for ours, theirs in zip(trainer.state, seen[-1]):
        np.testing.assert_array_equal(ours, theirs)
    assert trainer.train(DATA, max_steps=2).steps == 2


def test_ctrl_c_stops_a_run_without_a_callback():
    trainer = systole.Trainer(STEP, INIT)
    # SIGINT to this (the main) thread while the loop runs without the GIL: Python sees it when
    # the loop takes the GIL back after the next step.
    timer = threading.Timer(0.2, signal.pthread_kill, (threading.main_thread().ident, signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            trainer.train(DATA, epochs=30)  # about 5 s if nothing stopped it
    finally:
        timer.join()
    assert len(trainer.state) == 8
