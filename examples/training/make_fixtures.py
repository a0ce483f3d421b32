"""Writes the training fixtures beside this file: JAX training steps of an MLP on scikit-learn's
8x8 digits as HLO text, the data set, the initial state and JAX's own training on the CPU from
the same initialization and the same batches (the reference `systole train` is checked against).

    .venv/bin/python examples/training/make_fixtures.py [pool_cnn | loops | cnn_adam]

(with `pool_cnn`, only the pooled CNN's files are written, with `loops` only the loops' files,
with `cnn_adam` only the CNN's Adam step and its initial state; the others are left as they are)

Files (docs/TRAINING.md describes them):
  digits.npz               arr_0 … arr_3: x_train [1437, 64], y_train [1437, 10] (one-hot),
                           x_test [360, 64], y_test [360, 10]; pixels scaled to [0, 1]; a fixed
                           80/20 split
  mlp_sgd_step.hlo         train_step(params, momentum, x, y) -> (params, momentum, loss, accuracy),
                           SGD with momentum; params and momentum donated (input_output_alias)
  mlp_adam_step.hlo        train_step(params, m, v, count, x, y) -> (params, m, v, count, loss,
                           accuracy), Adam; the state donated
  mlp_grad.hlo,            the same steps cut in two for data-parallel pods: grad(params, x, y) ->
  mlp_{sgd,adam}_apply.hlo (grads, loss, accuracy) on a micro-batch of POD_SHARD_ROWS rows;
                           apply(state, grads) -> state
  mlp_eval.hlo             eval(params, x, y) -> accuracy, on the whole test set
  cnn_sgd_step.hlo, cnn_eval.hlo, cnn_sgd_{init,jax}.npz
                           the same for a small CNN (two 3x3 convolutions, 8 channels, dense),
                           SGD with momentum, CNN_EPOCHS epochs of reference
  cnn_grad.hlo,            the CNN's step cut in two for pods, as mlp_grad.hlo and
  cnn_sgd_apply.hlo        mlp_sgd_apply.hlo
  pool_cnn_sgd_step.hlo, pool_cnn_eval.hlo, pool_cnn_sgd_{init,jax}.npz
                           a CNN with a 2x2 max pool between its convolutions (3x3, 8 then 16
                           channels), SGD with momentum, CNN_EPOCHS epochs of reference: the
                           pool's gradient is select-and-scatter
  cnn_adam_step.hlo,       the CNN's step with Adam, and its initial state (params, m, v, count):
  cnn_adam_init.npz        no JAX run of its own; the convolutions' Adam update in device memory
                           is checked against the host's update (device_state_test.cpp)
  mlp_sgd_loop.hlo,        several training steps in one program, as a `while` loop: the MLP's
  cnn_sgd_scan.hlo         SGD step LOOP_STEPS times in a `lax.fori_loop` over stacked batches
                           (params, momentum, xs [steps, BATCH, 64], ys [steps, BATCH, 10]) ->
                           (params, momentum, losses [steps]), and the CNN's SGD step
                           SCAN_STEPS times in a `lax.scan` over them; the state donated; the
                           batches are the first ones of epoch 0 (batch_order)
  {mlp_sgd_loop,cnn_sgd_scan}_jax.npz
                           JAX on the CPU running that one program: arr_0 the losses, arr_1 …
                           the state after it
  mlp_{sgd,adam}_init.npz  the initial state, arr_0, arr_1, … in parameter order
  mlp_{sgd,adam}_jax.npz   JAX on the CPU (f32): arr_0 the losses [steps], arr_1 the test
                           accuracy after each epoch [epochs], arr_2 … the state after the first
                           REFERENCE_STEPS steps

Batches: every epoch visits the training set in the order of a Fisher-Yates shuffle driven by
SplitMix64 seeded with SHUFFLE_SEED + epoch (batch_order below; runtime/training.cpp does the
same), BATCH rows per step, the last partial batch dropped.
"""
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
from sklearn.datasets import load_digits

BATCH = 32
# a pod's micro-batch (mlp_grad.hlo): 8 shards of 4 rows make one global batch of BATCH rows
POD_SHARD_ROWS = 4
HIDDEN = 64
CNN_CHANNELS = 8
CNN_EPOCHS = 10
EPOCHS = 30
SHUFFLE_SEED = 17
INIT_SEED = 0
REFERENCE_STEPS = 8
SGD_LR, SGD_MOMENTUM = 0.05, 0.9
ADAM_LR, ADAM_B1, ADAM_B2, ADAM_EPS = 2e-3, 0.9, 0.999, 1e-8
MASK = (1 << 64) - 1
# digits.npz holds arr_0 … arr_3 in this order (Systole reads .npz archives positionally)
DATA_ARRAYS = ("x_train", "y_train", "x_test", "y_test")


def splitmix64(state):
    """One SplitMix64 step: (new state, output)."""
    state = (state + 0x9E3779B97F4A7C15) & MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return state, z ^ (z >> 31)


def batch_order(n, epoch, seed=SHUFFLE_SEED):
    """The row order of one epoch: Fisher-Yates from the last element down, j = next % (i + 1)."""
    order = list(range(n))
    state = (seed + epoch) & MASK
    for i in range(n - 1, 0, -1):
        state, r = splitmix64(state)
        j = r % (i + 1)
        order[i], order[j] = order[j], order[i]
    return np.array(order)


def load_data():
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[digits.target]
    split = np.random.default_rng(1234).permutation(len(x))
    n_train = len(x) - 360
    train, test = split[:n_train], split[n_train:]
    return dict(x_train=x[train], y_train=y[train], x_test=x[test], y_test=y[test])


def init_params():
    k1, k2 = jax.random.split(jax.random.PRNGKey(INIT_SEED))
    w1 = jax.random.normal(k1, (64, HIDDEN), jnp.float32) * np.sqrt(2.0 / 64)
    w2 = jax.random.normal(k2, (HIDDEN, 10), jnp.float32) * np.sqrt(1.0 / HIDDEN)
    return (w1, jnp.zeros((HIDDEN,), jnp.float32), w2, jnp.zeros((10,), jnp.float32))


def forward(params, x):
    w1, b1, w2, b2 = params
    h = jax.nn.relu(x @ w1 + b1)
    return h @ w2 + b2


def init_cnn():
    k1, k2, k3 = jax.random.split(jax.random.PRNGKey(INIT_SEED), 3)
    c1 = jax.random.normal(k1, (3, 3, 1, CNN_CHANNELS), jnp.float32) * np.sqrt(2.0 / 9)
    c2 = jax.random.normal(k2, (3, 3, CNN_CHANNELS, CNN_CHANNELS), jnp.float32) * np.sqrt(2.0 / (9 * CNN_CHANNELS))
    w = jax.random.normal(k3, (64 * CNN_CHANNELS, 10), jnp.float32) * np.sqrt(1.0 / (64 * CNN_CHANNELS))
    zeros = jnp.zeros((CNN_CHANNELS,), jnp.float32)
    return (c1, zeros, c2, zeros, w, jnp.zeros((10,), jnp.float32))


def cnn_forward(params, x):
    """Two 3x3 SAME convolutions with bias and ReLU on the 8x8 image (rows of 64 pixels), then
    a dense layer. No pooling: a max pool's gradient is select-and-scatter, which the HLO front
    end does not read yet."""
    c1, b1, c2, b2, w, b = params
    dn = ("NHWC", "HWIO", "NHWC")
    h = x.reshape(x.shape[0], 8, 8, 1)
    h = jax.nn.relu(jax.lax.conv_general_dilated(h, c1, (1, 1), "SAME", dimension_numbers=dn) + b1)
    h = jax.nn.relu(jax.lax.conv_general_dilated(h, c2, (1, 1), "SAME", dimension_numbers=dn) + b2)
    return h.reshape(h.shape[0], -1) @ w + b


POOL_CNN_CHANNELS = (8, 16)


def init_pool_cnn():
    k1, k2, k3 = jax.random.split(jax.random.PRNGKey(INIT_SEED + 1), 3)
    a, b = POOL_CNN_CHANNELS
    c1 = jax.random.normal(k1, (3, 3, 1, a), jnp.float32) * np.sqrt(2.0 / 9)
    c2 = jax.random.normal(k2, (3, 3, a, b), jnp.float32) * np.sqrt(2.0 / (9 * a))
    w = jax.random.normal(k3, (16 * b, 10), jnp.float32) * np.sqrt(1.0 / (16 * b))
    return {"c1": c1, "b1": jnp.zeros((a,), jnp.float32), "c2": c2, "b2": jnp.zeros((b,), jnp.float32),
            "w": w, "b": jnp.zeros((10,), jnp.float32)}


def pool_cnn_forward(params, x):
    """A 3x3 SAME convolution with bias and ReLU on the 8x8 image, a 2x2 max pool (stride 2) to
    4x4, another 3x3 convolution with bias and ReLU, a dense layer. The pool's gradient is
    select-and-scatter. The parameters are a dict, which tells this model from the others."""
    dn = ("NHWC", "HWIO", "NHWC")
    h = x.reshape(x.shape[0], 8, 8, 1)
    h = jax.nn.relu(jax.lax.conv_general_dilated(h, params["c1"], (1, 1), "SAME", dimension_numbers=dn) + params["b1"])
    h = jax.lax.reduce_window(h, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    h = jax.nn.relu(jax.lax.conv_general_dilated(h, params["c2"], (1, 1), "SAME", dimension_numbers=dn) + params["b2"])
    return h.reshape(h.shape[0], -1) @ params["w"] + params["b"]


def model_forward(params, x):
    if isinstance(params, dict):
        return pool_cnn_forward(params, x)
    return (cnn_forward if len(params) == 6 else forward)(params, x)


def loss_and_logits(params, x, y):
    logits = model_forward(params, x)
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * y, axis=-1)), logits


def accuracy(logits, y):
    return jnp.mean((jnp.argmax(logits, -1) == jnp.argmax(y, -1)).astype(jnp.float32))


def grad(params, x, y):
    (loss, logits), grads = jax.value_and_grad(loss_and_logits, has_aux=True)(params, x, y)
    return grads, loss, accuracy(logits, y)


def sgd_apply(params, momentum, grads):
    momentum = jax.tree.map(lambda m, g: SGD_MOMENTUM * m + g, momentum, grads)
    params = jax.tree.map(lambda p, m: p - SGD_LR * m, params, momentum)
    return params, momentum


def adam_apply(params, m, v, count, grads):
    count = count + 1.0
    m = jax.tree.map(lambda m, g: ADAM_B1 * m + (1 - ADAM_B1) * g, m, grads)
    v = jax.tree.map(lambda v, g: ADAM_B2 * v + (1 - ADAM_B2) * g * g, v, grads)
    scale = ADAM_LR * jnp.sqrt(1 - ADAM_B2 ** count) / (1 - ADAM_B1 ** count)
    params = jax.tree.map(lambda p, m, v: p - scale * m / (jnp.sqrt(v) + ADAM_EPS), params, m, v)
    return params, m, v, count


def sgd_step(params, momentum, x, y):
    grads, loss, acc = grad(params, x, y)
    params, momentum = sgd_apply(params, momentum, grads)
    return params, momentum, loss, acc


def adam_step(params, m, v, count, x, y):
    grads, loss, acc = grad(params, x, y)
    params, m, v, count = adam_apply(params, m, v, count, grads)
    return params, m, v, count, loss, acc


def eval_accuracy(params, x, y):
    return accuracy(model_forward(params, x), y)


def flat(tree):
    return [np.asarray(a) for a in jax.tree.leaves(tree)]


def train_reference(step, state, data, epochs):
    """JAX on the CPU, the batches of batch_order: per-step losses, per-epoch test accuracy and
    the state after REFERENCE_STEPS steps."""
    jitted = jax.jit(step)
    evaluate = jax.jit(eval_accuracy)
    losses, accuracies, early = [], [], None
    n = len(data["x_train"])
    for epoch in range(epochs):
        order = batch_order(n, epoch)
        for b in range(n // BATCH):
            rows = order[b * BATCH:(b + 1) * BATCH]
            *state, loss, _ = jitted(*state, data["x_train"][rows], data["y_train"][rows])
            losses.append(float(loss))
            if len(losses) == REFERENCE_STEPS:
                early = flat(state)
        accuracies.append(float(evaluate(state[0], data["x_test"], data["y_test"])))
        print(f"  epoch {epoch + 1}: test accuracy {accuracies[-1]:.4f}, last loss {losses[-1]:.4f}")
    return np.array(losses, np.float32), np.array(accuracies, np.float32), early


def write_pool_cnn(here, data, write):
    x = jnp.zeros((BATCH, 64), jnp.float32)
    y = jnp.zeros((BATCH, 10), jnp.float32)
    cnn = init_pool_cnn()
    state = (cnn, jax.tree.map(jnp.zeros_like, cnn))
    write("pool_cnn_sgd_step.hlo", sgd_step, (*state, x, y), donate=(0, 1))
    write("pool_cnn_eval.hlo", eval_accuracy, (cnn, jnp.zeros((360, 64), jnp.float32), jnp.zeros((360, 10), jnp.float32)))
    np.savez(os.path.join(here, "pool_cnn_sgd_init.npz"), *flat(state))
    print(f"pooled cnn sgd: JAX on the CPU, {CNN_EPOCHS} epochs")
    losses, accuracies, early = train_reference(sgd_step, list(state), data, CNN_EPOCHS)
    np.savez(os.path.join(here, "pool_cnn_sgd_jax.npz"), losses, accuracies, *early)


def write_cnn_adam(here, write):
    """The CNN's Adam step and its initial state: the convolutions' Adam update in device memory
    (tests/training/device_state_test.cpp); no JAX training run of its own."""
    cnn = init_cnn()
    zeros = jax.tree.map(jnp.zeros_like, cnn)
    state = (cnn, zeros, zeros, jnp.zeros((), jnp.float32))
    x = jnp.zeros((BATCH, 64), jnp.float32)
    y = jnp.zeros((BATCH, 10), jnp.float32)
    write("cnn_adam_step.hlo", adam_step, (*state, x, y), donate=(0, 1, 2, 3))
    np.savez(os.path.join(here, "cnn_adam_init.npz"), *flat(state))


LOOP_STEPS = 8
SCAN_STEPS = 8


def mlp_sgd_loop(params, momentum, xs, ys):
    """LOOP_STEPS SGD steps in one `lax.fori_loop`, each on its own batch of xs / ys; the losses
    collected in an array the loop carries."""
    def body(i, carry):
        params, momentum, losses = carry
        params, momentum, loss, _ = sgd_step(params, momentum, xs[i], ys[i])
        return params, momentum, losses.at[i].set(loss)
    losses = jnp.zeros((xs.shape[0],), jnp.float32)
    return jax.lax.fori_loop(0, xs.shape[0], body, (params, momentum, losses))


def cnn_sgd_scan(params, momentum, xs, ys):
    """The CNN's SGD step over the stacked batches in a `lax.scan`: the losses are its stacked
    outputs."""
    def body(carry, batch):
        params, momentum, loss, _ = sgd_step(*carry, *batch)
        return (params, momentum), loss
    (params, momentum), losses = jax.lax.scan(body, (params, momentum), (xs, ys))
    return params, momentum, losses


def write_loops(here, data, write):
    """The training loops and JAX's own run of each on the CPU (from the initial state of the
    single step, on the first batches of epoch 0)."""
    order = batch_order(len(data["x_train"]), 0)
    for name, loop, state, steps in (("mlp_sgd_loop", mlp_sgd_loop, (init_params(),), LOOP_STEPS),
                                     ("cnn_sgd_scan", cnn_sgd_scan, (init_cnn(),), SCAN_STEPS)):
        state = (state[0], jax.tree.map(jnp.zeros_like, state[0]))
        rows = order[:steps * BATCH]
        xs = data["x_train"][rows].reshape(steps, BATCH, 64)
        ys = data["y_train"][rows].reshape(steps, BATCH, 10)
        write(f"{name}.hlo", loop, (*state, xs, ys), donate=(0, 1))
        params, momentum, losses = jax.jit(loop)(*state, xs, ys)
        np.savez(os.path.join(here, f"{name}_jax.npz"), np.asarray(losses), *flat((params, momentum)))
        print(f"{name}: {steps} steps in one program, losses {np.asarray(losses)}")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    data = load_data()

    def write(name, fn, args, donate=()):
        text = jax.jit(fn, donate_argnums=donate, keep_unused=True).lower(*args).as_text(dialect="hlo")
        with open(os.path.join(here, name), "w") as f:
            f.write(text)

    if sys.argv[1:] == ["pool_cnn"]:
        write_pool_cnn(here, data, write)
        return
    if sys.argv[1:] == ["loops"]:
        write_loops(here, data, write)
        return
    if sys.argv[1:] == ["cnn_adam"]:
        write_cnn_adam(here, write)
        return
    if sys.argv[1:]:
        sys.exit(f"usage: {sys.argv[0]} [pool_cnn | loops | cnn_adam]")
    np.savez_compressed(os.path.join(here, "digits.npz"), *(data[k] for k in DATA_ARRAYS))
    params = init_params()
    zeros = jax.tree.map(jnp.zeros_like, params)
    x = jnp.zeros((BATCH, 64), jnp.float32)
    y = jnp.zeros((BATCH, 10), jnp.float32)
    count = jnp.zeros((), jnp.float32)
    optimizers = {
        "sgd": (sgd_step, sgd_apply, (params, zeros), 2),
        "adam": (adam_step, adam_apply, (params, zeros, zeros, count), 4),
    }

    for name, (step, apply, state, n_state) in optimizers.items():
        write(f"mlp_{name}_step.hlo", step, (*state, x, y), donate=tuple(range(n_state)))
        write(f"mlp_{name}_apply.hlo", apply, (*state, params), donate=tuple(range(n_state)))
        np.savez(os.path.join(here, f"mlp_{name}_init.npz"), *flat(state))
        print(f"{name}: JAX on the CPU, {EPOCHS} epochs of {len(data['x_train']) // BATCH} steps")
        losses, accuracies, early = train_reference(step, list(state), data, EPOCHS)
        np.savez(os.path.join(here, f"mlp_{name}_jax.npz"), losses, accuracies, *early)
    write("mlp_grad.hlo", grad, (params, x[:POD_SHARD_ROWS], y[:POD_SHARD_ROWS]))
    cnn = init_cnn()
    cnn_state = (cnn, jax.tree.map(jnp.zeros_like, cnn))
    write("cnn_sgd_step.hlo", sgd_step, (*cnn_state, x, y), donate=(0, 1))
    write("cnn_grad.hlo", grad, (cnn, x[:POD_SHARD_ROWS], y[:POD_SHARD_ROWS]))
    write("cnn_sgd_apply.hlo", sgd_apply, (*cnn_state, cnn), donate=(0, 1))
    write("cnn_eval.hlo", eval_accuracy, (cnn, jnp.zeros((360, 64), jnp.float32), jnp.zeros((360, 10), jnp.float32)))
    np.savez(os.path.join(here, "cnn_sgd_init.npz"), *flat(cnn_state))
    print(f"cnn sgd: JAX on the CPU, {CNN_EPOCHS} epochs")
    losses, accuracies, early = train_reference(sgd_step, list(cnn_state), data, CNN_EPOCHS)
    np.savez(os.path.join(here, "cnn_sgd_jax.npz"), losses, accuracies, *early)
    write("mlp_eval.hlo", eval_accuracy, (params, jnp.zeros((360, 64), jnp.float32), jnp.zeros((360, 10), jnp.float32)))
    write_pool_cnn(here, data, write)
    write_loops(here, data, write)
    write_cnn_adam(here, write)


if __name__ == "__main__":
    main()
