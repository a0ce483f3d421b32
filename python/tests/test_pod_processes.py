"""Pods across Python processes (docs/TRAINING.md, "Pods across processes"): `systole.Trainer`
and `systole.jax.fit_pod` with pod_processes=, pod_index=, pod_rendezvous= (and pod_interface=) — the
counterpart of `systole train --pod-processes/--pod-index/--pod-rendezvous` — and under mpirun, which gives the
index and the count through its environment (read by the same C++ function as the command's,
runtime::ResolvePodProcesses). Two Python processes of one `ref` device each must end with the
state of one device running the same 8 shards, bit for bit."""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import systole

from conftest import SOURCE_DIR

FIXTURES = SOURCE_DIR / "examples" / "training"
GRAD, APPLY, INIT, DATA = (FIXTURES / name for name in ("mlp_grad.hlo", "mlp_sgd_apply.hlo", "mlp_sgd_init.npz",
                                                        "digits.npz"))
LAUNCHER_VARIABLES = ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK")

# One process of a pod: trains 3 steps and writes what it knows to REPORTS/PID.json (a file of
# its own: mpirun's merged output may run two processes' lines together).
#   WORKER trainer CHECKPOINT RENDEZVOUS REPORTS INDEX  (systole.Trainer on the HLO files,
#                                                        pod_index=INDEX)
#   WORKER fit_pod CHECKPOINT RENDEZVOUS REPORTS        (systole.jax.fit_pod on make_fixtures.py's
#                                                        JAX functions; the index and count from
#                                                        mpirun's environment)
WORKER = r"""
import importlib.util, json, os, sys
import numpy as np
import systole
how, checkpoint, rendezvous, reports, *index = sys.argv[1:]
fixtures = __import__("pathlib").Path(FIXTURES)
if how == "trainer":
    trainer = systole.Trainer(grad=fixtures / "mlp_grad.hlo", apply=fixtures / "mlp_sgd_apply.hlo",
                              init=fixtures / "mlp_sgd_init.npz", device="ref", shards=8,
                              pod_processes=2, pod_index=int(index[0]), pod_rendezvous=rendezvous,
                              pod_interface="lo")  # loopback's address, read by name
    summary = trainer.train(fixtures / "digits.npz", max_steps=3, checkpoint=checkpoint)
    place = (trainer.pod_index, trainer.pod_processes)
else:
    import jax
    import systole.jax
    spec = importlib.util.spec_from_file_location("make_fixtures", fixtures / "make_fixtures.py")
    f = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(f)
    params = f.init_params()
    summary = systole.jax.fit_pod(f.grad, f.sgd_apply, (params, jax.tree.map(np.zeros_like, params)),
                                  fixtures / "digits.npz", batch_size=32, shards=8, device="ref", max_steps=3,
                                  checkpoint=checkpoint, pod_rendezvous=rendezvous)
    place = (None, summary.pod["processes"])
with open(os.path.join(reports, f"{os.getpid()}.json"), "w") as out:
    json.dump({"place": place, "pod": summary.pod, "last_loss": float(summary.losses[-1]),
               "device_cycles": summary.device_cycles}, out)
""".replace("FIXTURES", repr(str(FIXTURES)))


def worker_environment(**launcher):
    environment = {k: v for k, v in os.environ.items() if k not in LAUNCHER_VARIABLES}
    environment.update(launcher)
    return environment


def reports(directory):
    return [json.loads(path.read_text()) for path in sorted(directory.glob("*.json"))]


def state_arrays(path):
    """A checkpoint's state (arr_0, the steps and device cycles, differs: a pod's exchange costs cycles)."""
    with np.load(path) as archive:
        return [archive[f"arr_{i}"] for i in range(1, len(archive.files))]


@pytest.fixture(scope="module")
def one_device(tmp_path_factory):
    """The state of one `ref` device after the same 3 steps of 8 shards."""
    path = tmp_path_factory.mktemp("one") / "one.npz"
    systole.Trainer(grad=GRAD, apply=APPLY, init=INIT, device="ref", shards=8).train(DATA, max_steps=3,
                                                                                       checkpoint=path)
    return state_arrays(path)


def assert_bit_identical(path, one_device):
    state = state_arrays(path)
    assert len(state) == len(one_device) == 8
    for i, (ours, one) in enumerate(zip(state, one_device)):
        assert ours.dtype == one.dtype and ours.tobytes() == one.tobytes(), f"state value {i} differs"


def assert_one_pod(runs, processes):
    assert len(runs) == processes
    assert all(r["pod"]["devices"] == processes and r["pod"]["processes"] == processes for r in runs), runs
    assert len({r["last_loss"] for r in runs}) == 1 and len({r["device_cycles"] for r in runs}) == 1


def test_two_python_processes_are_one_device_bit_for_bit(tmp_path, one_device):
    """pod_processes=2, pod_index=0 and 1: two `python` processes, one Trainer each."""
    (tmp_path / "reports").mkdir()
    workers = [subprocess.Popen([sys.executable, "-c", WORKER, "trainer", str(tmp_path / f"pod.{i}.npz"),
                                 str(tmp_path / "rv"), str(tmp_path / "reports"), str(i)], env=worker_environment(),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in (1, 0)]
    for worker in workers:
        _, stderr = worker.communicate(timeout=300)
        assert worker.returncode == 0, stderr
    runs = reports(tmp_path / "reports")
    assert sorted(tuple(r["place"]) for r in runs) == [(0, 2), (1, 2)]
    assert_one_pod(runs, 2)
    assert_bit_identical(tmp_path / "pod.0.npz", one_device)
    assert not (tmp_path / "pod.1.npz").exists()  # the first process writes the checkpoint


def test_fit_pod_under_mpirun_is_one_device_bit_for_bit(tmp_path, one_device):
    """fit_pod with pod_rendezvous only: the index and the count come from mpirun (when it is
    installed; else its two variables are set here, as mpirun sets them)."""
    (tmp_path / "reports").mkdir()
    args = [sys.executable, "-c", WORKER, "fit_pod", str(tmp_path / "pod.npz"), str(tmp_path / "rv"),
            str(tmp_path / "reports")]
    if shutil.which("mpirun"):
        run = subprocess.run(["mpirun", "--allow-run-as-root", "--oversubscribe", "-n", "2", *args],
                             env=worker_environment(), stdin=subprocess.DEVNULL, capture_output=True, text=True,
                             timeout=300, check=False)
        assert run.returncode == 0, run.stdout + run.stderr
    else:
        workers = [subprocess.Popen(args, env=worker_environment(OMPI_COMM_WORLD_RANK=str(i), OMPI_COMM_WORLD_SIZE="2"),
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in (1, 0)]
        for worker in workers:
            _, stderr = worker.communicate(timeout=300)
            assert worker.returncode == 0, stderr
    assert_one_pod(reports(tmp_path / "reports"), 2)
    assert_bit_identical(tmp_path / "pod.npz", one_device)


@pytest.fixture
def launched_as_1_of_2(monkeypatch):
    """This process's environment as mpirun -n 2 leaves it for process 1."""
    for name in LAUNCHER_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OMPI_COMM_WORLD_RANK", "1")
    monkeypatch.setenv("OMPI_COMM_WORLD_SIZE", "2")


def test_keywords_that_disagree_with_mpirun_are_refused(launched_as_1_of_2, tmp_path):
    pod = dict(grad=GRAD, apply=APPLY, init=INIT, device="ref", shards=8)
    with pytest.raises(ValueError, match=r"pod_index=0, but mpirun started this process as index 1 "
                                         r"\(OMPI_COMM_WORLD_RANK=1\): under a launcher leave pod_index out"):
        systole.Trainer(**pod, pod_index=0, pod_rendezvous=tmp_path / "rv")
    with pytest.raises(ValueError, match=r"pod_processes=3, but mpirun started 2 processes \(OMPI_COMM_WORLD_SIZE=2\)"):
        systole.Trainer(**pod, pod_processes=3, pod_rendezvous=tmp_path / "rv")
    with pytest.raises(ValueError, match=r"mpirun started 2 processes \(OMPI_COMM_WORLD_SIZE=2\): a pod across "
                                         r"processes needs pod_rendezvous=DIR"):
        systole.Trainer(**pod)
    with pytest.raises(ValueError, match=r"a pod across processes trains with grad= and apply=, not one training step"):
        systole.Trainer(FIXTURES / "mlp_sgd_step.hlo", INIT, device="ref")
    with pytest.raises(ValueError, match=r"pod_interface=nosuch0: this host has no network interface of that name "
                                         r"\(it has: lo"):
        systole.Trainer(**pod, pod_rendezvous=tmp_path / "rv", pod_interface="nosuch0")
    with pytest.raises(ValueError, match=r"pod_address=127.0.0.1 and pod_interface=lo: give one of them"):
        systole.Trainer(**pod, pod_rendezvous=tmp_path / "rv", pod_address="127.0.0.1", pod_interface="lo")
    assert not (tmp_path / "rv").exists()  # refused before any rendezvous
