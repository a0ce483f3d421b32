"""systole.Trainer and systole.jax.fit on a program of several steps per launch: the MLP's SGD
step 8 times in a `lax.fori_loop` over batches stacked [8, 32, …] (examples/training/
mlp_sgd_loop.hlo, lowered from make_fixtures.py's mlp_sgd_loop), fed the same batches as the
single step, 8 at a time — so the same losses and state bits as mlp_sgd_step.hlo step by step
(docs/TRAINING.md, "Several steps per launch")."""
import jax
import numpy as np
import pytest

import systole
import systole.jax

from test_train_loop import DATA, FIXTURES, INIT, STEP, load_fixtures, npz

LOOP = FIXTURES / "mlp_sgd_loop.hlo"
STEPS = 48  # 6 launches, the last across the end of epoch 1 (44 steps)


@pytest.fixture(scope="module")
def single_step():
    """The single step's 48 steps, one launch each."""
    trainer = systole.Trainer(STEP, INIT)
    summary = trainer.train(DATA, max_steps=STEPS)
    return dict(losses=summary.losses, state=trainer.state)


def test_a_loop_program_trains_as_the_single_step_does(single_step):
    trainer = systole.Trainer(LOOP, INIT)
    assert trainer.steps_per_launch == 8 and trainer.batch_size == 32
    assert "8 steps per launch" in repr(trainer)
    summary = trainer.train(DATA, max_steps=STEPS)
    assert summary.steps == STEPS
    np.testing.assert_array_equal(summary.losses, single_step["losses"])
    for ours, theirs in zip(trainer.state, single_step["state"], strict=True):
        np.testing.assert_array_equal(ours, theirs)


def test_fit_lowers_a_loop_for_stacked_batches(single_step):
    f = load_fixtures()
    params = f.init_params()
    state = (params, jax.tree.map(np.zeros_like, params))
    summary = systole.jax.fit(f.mlp_sgd_loop, state, npz(DATA), batch_size=f.BATCH, steps_per_launch=f.LOOP_STEPS,
                              max_steps=STEPS)
    np.testing.assert_array_equal(summary.losses, single_step["losses"])
    np.testing.assert_array_equal(summary.state[0][0], single_step["state"][0])


def test_partial_launches_are_refused():
    trainer = systole.Trainer(LOOP, INIT)
    with pytest.raises(ValueError, match=r"runs 8 steps per launch, but this run would make 20 steps .* ask for a "
                                         r"step limit of 16 or 24"):
        trainer.train(DATA, max_steps=20)
