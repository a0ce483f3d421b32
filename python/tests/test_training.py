"""systole.jax.train_step: a JAX training step with donated state on Systole (docs/TRAINING.md).
The MLP, data and batches are examples/training/make_fixtures.py's, so JAX on the CPU takes the
same steps."""
import importlib.util
import sys

import jax
import numpy as np
import pytest

import systole
import systole.jax

from conftest import SOURCE_DIR


@pytest.fixture(scope="module")
def fixtures():
    path = SOURCE_DIR / "examples" / "training" / "make_fixtures.py"
    spec = importlib.util.spec_from_file_location("make_fixtures", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["make_fixtures"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def mlp(fixtures):
    """The data, the initial SGD state, an example batch and a TrainStep on `ref`."""
    f = fixtures
    data = f.load_data()
    params = f.init_params()
    momentum = jax.tree.map(np.zeros_like, params)
    example = (data["x_train"][:f.BATCH], data["y_train"][:f.BATCH])
    step = systole.jax.train_step(f.sgd_step, (params, momentum), example, device="ref")
    return data, (params, momentum), example, step


def batches(f, data, steps):
    order = f.batch_order(len(data["x_train"]), 0)
    for b in range(steps):
        rows = order[b * f.BATCH:(b + 1) * f.BATCH]
        yield data["x_train"][rows], data["y_train"][rows]


def test_only_the_batch_goes_in_and_the_losses_follow_jax(fixtures, mlp):
    f = fixtures
    data, state, _, step = mlp
    assert step.batch_size == f.BATCH
    jax_step = jax.jit(f.sgd_step)
    for x, y in batches(f, data, 6):
        loss, accuracy = step(x, y)
        *state, jax_loss, _ = jax_step(*state, x, y)
        assert abs(loss - float(jax_loss)) <= 0.02 * float(jax_loss)  # bf16 operands on the MXU
        assert 0.0 <= accuracy <= 1.0
    assert step.cycles > 0
    new_params, _ = step.state
    for ours, theirs in zip(jax.tree.leaves(new_params), jax.tree.leaves(state[0])):
        assert ours.shape == theirs.shape
        assert np.max(np.abs(ours - np.asarray(theirs))) <= 2 ** -5 * np.max(np.abs(np.asarray(theirs)))


def test_state_can_be_replaced_and_is_checked(mlp):
    _, (params, momentum), (x, y), step = mlp
    first = step(x, y)[0]
    step.state = (params, momentum)  # back to the start: the same step gives the same loss
    assert step(x, y)[0] == first
    with pytest.raises(ValueError, match="has shape"):
        step.state = (jax.tree.map(lambda a: np.zeros((3,) + a.shape[1:], np.float32), params), momentum)
