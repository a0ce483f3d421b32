"""Writes the JAX-made HLO fixtures beside this file (tests/hlo/jax_dump_test.cpp and
tests/compiler/corpus_test.cpp read them):

    PYTHONPATH=build/python .venv/bin/python tests/hlo/data/jax_dumps.py

The text is what systole.jax.hlo_text prints for the pinned JAX (python/requirements.txt):
the module with metadata and the FileNames / FunctionNames / FileLocations / StackFrames
tables. The `_optimized` fixtures are what XLA's CPU compiler prints after optimization
(`jax.jit(fn).lower(...).compile().as_text()`): `fusion` instructions calling fused
computations, operands without shapes, scheduling attributes. The file names in those tables are
made relative to the repository so the fixtures do not depend on where the repository is checked
out. The control-flow fixtures (`lax.fori_loop`: `while`; `lax.cond`, `lax.switch`: `conditional`),
the indexed ones (gather, scatter, sort, dynamic-update-slice) and the max-pool gradients (select-
and-scatter) come with an .npz of inputs and JAX's outputs (each run's inputs, then its output).
"""
import os

import jax
import jax.numpy as jnp
import numpy as np

from systole.jax import hlo_text


def mlp(x, w1, b1, w2, b2):
    h = jax.nn.relu(x @ w1 + b1)
    return h @ w2 + b2


def cnn(x, k1, b1, k2, w3):
    dn = ("NHWC", "HWIO", "NHWC")
    y = jax.lax.conv_general_dilated(x, k1, (1, 1), "SAME", dimension_numbers=dn) + b1
    y = jax.nn.relu(y)
    y = jax.lax.reduce_window(y, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    y = jax.nn.relu(jax.lax.conv_general_dilated(y, k2, (1, 1), "SAME", dimension_numbers=dn))
    return y.reshape(y.shape[0], -1) @ w3


def layer_norm(x, gamma, beta):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / jnp.sqrt(var + 1e-5) * gamma + beta


def attention(q, k, v):
    scores = q @ k.T / jnp.sqrt(jnp.float32(q.shape[-1]))
    return jax.nn.softmax(scores, axis=-1) @ v


def causal_attention(q, k, v):
    """Self-attention with a causal mask as a GPT block writes it: `jnp.where` of a `jnp.tril`
    mask (compares of iotas: a compile-time constant) and -inf, then the softmax."""
    scores = q @ k.T / jnp.sqrt(jnp.float32(q.shape[-1]))
    causal = jnp.tril(jnp.ones((q.shape[0], k.shape[0]), bool))
    return jax.nn.softmax(jnp.where(causal, scores, -jnp.inf), axis=-1) @ v


def encoder_layer(x, wq, wk, wv, wo, g1, b1, w1, c1, w2, c2, g2, b2, pad):
    """A BERT-style (post-norm) encoder layer: two-head self-attention with a padding mask
    (`pad`: 1 for real tokens, 0 for padding; BERT's additive form, (pad - 1) * 10^4 added to
    the scores), residual adds, layer norms, a GELU (tanh form) feed-forward block."""
    seq, width = x.shape
    heads = 2
    def split(t):
        return t.reshape(seq, heads, width // heads).transpose(1, 0, 2)

    def norm(t, g, b):
        mean = t.mean(-1, keepdims=True)
        var = ((t - mean) ** 2).mean(-1, keepdims=True)
        return (t - mean) * jax.lax.rsqrt(var + 1e-5) * g + b

    q, k, v = split(x @ wq), split(x @ wk), split(x @ wv)
    scores = q @ k.transpose(0, 2, 1) / jnp.sqrt(jnp.asarray(width // heads, x.dtype))
    scores = scores + ((pad - 1) * jnp.asarray(1e4, x.dtype))[None, None, :]
    attended = (jax.nn.softmax(scores, axis=-1) @ v).transpose(1, 0, 2).reshape(seq, width)
    h = norm(x + attended @ wo, g1, b1)
    f = jax.nn.gelu(h @ w1 + c1, approximate=True) @ w2 + c2
    return norm(h + f, g2, b2)


def dense_log_softmax(x, w):
    """A classifier's log-probabilities: `jax.nn.log_softmax` of a dense layer (the row max, the
    subtraction, exp, the row sums and their log, a second subtraction)."""
    return jax.nn.log_softmax(x @ w, axis=-1)


def dense_gelu_erf(x, w):
    """GELU in its erf form after a dense layer: JAX expands erf into a polynomial with selects."""
    return jax.nn.gelu(x @ w, approximate=False)


def fori(x, w):
    def body(i, h):
        return jnp.tanh(h @ w) + i.astype(jnp.float32)
    return jax.lax.fori_loop(0, 3, body, x)


def cond(p, x):
    return jax.lax.cond(p > 0, lambda v: v * 2.0, lambda v: jnp.sin(v) - 1.0, x)


def switch(i, x):
    return jax.lax.switch(i, [lambda v: v + 1.0, lambda v: v * v, lambda v: -v], x)


# Indexed operations: gather, scatter, sort, dynamic-update-slice (tests/hlo/indexed_test.cpp).
def take(table, ids):
    """gather; jnp.take's default mode fills out-of-range rows with NaN (a select after it)."""
    return jnp.take(table, ids, axis=0)


def take_grad(g, ids):
    """scatter-add with repeated ids, as an embedding's gradient."""
    return jnp.zeros((10, 4), jnp.float32).at[ids].add(g)


def scatter_set(x, ids, v):
    return x.at[ids].set(v)


def batched_take(tables, ids):
    """vmap makes operand_batching_dims / start_indices_batching_dims."""
    return jax.vmap(lambda t, i: t[i])(tables, ids)


def batched_take_grad(tables, ids, u):
    return jax.vmap(lambda t, i, v: t.at[i].add(v))(tables, ids, u)


def sort_rows(x):
    """A comparator with NaN and signed-zero handling and compare type=TOTALORDER."""
    return jnp.sort(x, axis=-1)


def argsort_columns(x):
    """Variadic sort (values, iota) along dimension 0; ties keep their order."""
    return jnp.argsort(x, axis=0, stable=True)


def scan_cumsum(h, xs):
    """lax.scan reads xs[i] with dynamic-slice and stacks outputs with dynamic-update-slice."""
    return jax.lax.scan(lambda c, x: (c + x, c + x), h, xs)[1]


def update_slice(x, u, i):
    return jax.lax.dynamic_update_slice(x, u, (i, 0))


def max_pool(x, window, strides, padding):
    return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, window, strides, padding)


def max_pool_grad(x, g):
    """A 2x2/2 max pool's gradient: select-and-scatter (select=ge, scatter=add); of tied
    elements the first in the window gets the gradient."""
    return jax.vjp(lambda t: max_pool(t, (1, 2, 2, 1), (1, 2, 2, 1), "VALID"), x)[1](g)[0]


def overlapping_pool_grad(x, g):
    """3x3 windows at stride 2, SAME padding: windows overlap (an element picked by two windows
    gets both gradients) and the padding is never picked."""
    return jax.vjp(lambda t: max_pool(t, (1, 3, 3, 1), (1, 2, 2, 1), "SAME"), x)[1](g)[0]


def cnn_pool_step(c1, b1, w, b, x, y):
    """One SGD step (lr 0.1) of a CNN with a max pool: 3x3 SAME convolution + bias + ReLU, 2x2
    max pool, dense to 10, softmax cross-entropy. Returned flat (one array, as the fixtures'
    .npz holds one output per run): the new c1, b1, w, b, then the loss."""
    def loss_fn(params):
        c1, b1, w, b = params
        dn = ("NHWC", "HWIO", "NHWC")
        h = jax.nn.relu(jax.lax.conv_general_dilated(x, c1, (1, 1), "SAME", dimension_numbers=dn) + b1)
        h = max_pool(h, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        logits = h.reshape(h.shape[0], -1) @ w + b
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * y, axis=-1))
    params = (c1, b1, w, b)
    loss, grads = jax.value_and_grad(loss_fn)(params)
    return jnp.concatenate([(p - 0.1 * g).ravel() for p, g in zip(params, grads)] + [loss[None]])


def pool_runs(rng):
    """Max-pool gradients on small integers (ties in most windows; every sum exact) and the CNN
    training step on digit-sized images."""
    f32 = np.float32
    ints = lambda *shape: rng.integers(-2, 3, shape).astype(f32)  # noqa: E731
    x = rng.random((4, 8, 8, 1)).astype(f32)
    y = np.eye(10, dtype=f32)[rng.integers(0, 10, 4)]
    cnn = [(rng.standard_normal((3, 3, 1, 4)) * 0.5).astype(f32), (rng.standard_normal(4) * 0.1).astype(f32),
           (rng.standard_normal((64, 10)) * 0.1).astype(f32), (rng.standard_normal(10) * 0.1).astype(f32), x, y]
    return {
        "jax_max_pool_grad": (max_pool_grad, [[ints(2, 4, 6, 3), ints(2, 2, 3, 3)]]),
        "jax_overlapping_pool_grad": (overlapping_pool_grad, [[ints(1, 5, 5, 2), ints(1, 3, 3, 2)]]),
        "jax_cnn_pool_step": (cnn_pool_step, [cnn]),
    }


def indexed_runs(rng):
    """Inputs for the indexed fixtures: sums are of small integers, so every result is exact."""
    f32 = np.float32
    table = rng.standard_normal((10, 4)).astype(f32)
    ints = lambda *shape: rng.integers(-8, 8, shape).astype(f32)  # noqa: E731
    ids = np.array([3, 0, 9, -1, 12, -11], np.int32)  # -1 wraps to 9; 12 and -11 are out of range
    repeated = np.array([1, 3, 1, 0, 9, 3], np.int32)
    row = np.array([2.0, -0.0, np.nan, 0.0, -np.inf, 1.0, -3.5, np.inf], f32)
    rows = np.stack([row, row[::-1], rng.standard_normal(8).astype(f32)])
    ties = np.array([[2, 1], [1, 1], [2, 0], [0, 1], [1, 0]], f32)
    return {
        "jax_take": (take, [[table, ids]]),
        "jax_take_grad": (take_grad, [[ints(6, 4), repeated]]),
        "jax_scatter_set": (scatter_set, [[ints(10, 4), np.array([7, 2, 5], np.int32), ints(3, 4)],
                                          [ints(10, 4), np.array([0, 11, 9], np.int32), ints(3, 4)]]),
        "jax_batched_take": (batched_take, [[rng.standard_normal((3, 5, 4)).astype(f32),
                                             np.array([[4, 0], [2, 2], [1, 3]], np.int32)]]),
        "jax_batched_take_grad": (batched_take_grad, [[ints(3, 5, 4), np.array([[4, 4], [2, 0], [1, 3]], np.int32),
                                                       ints(3, 2, 4)]]),
        "jax_sort_rows": (sort_rows, [[rows]]),
        "jax_argsort_columns": (argsort_columns, [[ties]]),
        "jax_scan_cumsum": (scan_cumsum, [[ints(2, 4), ints(3, 2, 4)]]),
        "jax_update_slice": (update_slice, [[ints(5, 4), ints(2, 4), np.int32(1)],
                                            [ints(5, 4), ints(2, 4), np.int32(4)],
                                            [ints(5, 4), ints(2, 4), np.int32(-3)]]),
    }


def vector_math_runs(rng):
    """log-softmax and erf-GELU of a [8, 64] dense layer, in bf16 and f32 (JAX's outputs kept)."""
    runs = {}
    for dtype, suffix in ((jnp.bfloat16, "bf16"), (jnp.float32, "f32")):
        x = rng.standard_normal((8, 32)).astype(dtype)
        w = (rng.standard_normal((32, 64)) / 4).astype(dtype)
        runs["jax_log_softmax_" + suffix] = (dense_log_softmax, [[x, w]])
        runs["jax_gelu_erf_" + suffix] = (dense_gelu_erf, [[x, w]])
    return runs


def as_npy(value):
    """bf16 as float32 (exact), as .npz files carry it (docs/HLO.md)."""
    array = np.asarray(value)
    return array.astype(np.float32) if array.dtype == jnp.bfloat16 else array


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.abspath(os.path.join(here, "..", "..", ".."))
    f32 = jnp.float32
    cases = {
        "jax_mlp.hlo": (mlp, [jnp.zeros((4, 32), f32), jnp.zeros((32, 64), f32), jnp.zeros((64,), f32),
                              jnp.zeros((64, 10), f32), jnp.zeros((10,), f32)]),
        "jax_cnn.hlo": (cnn, [jnp.zeros((2, 8, 8, 3), f32), jnp.zeros((3, 3, 3, 8), f32), jnp.zeros((8,), f32),
                              jnp.zeros((3, 3, 8, 16), f32), jnp.zeros((4 * 4 * 16, 10), f32)]),
    }
    optimized = {
        "jax_mlp_optimized.hlo": cases["jax_mlp.hlo"],
        "jax_cnn_optimized.hlo": cases["jax_cnn.hlo"],
        "jax_layer_norm_optimized.hlo": (layer_norm, [jnp.zeros((8, 32), f32), jnp.zeros((32,), f32),
                                                      jnp.zeros((32,), f32)]),
        "jax_attention_optimized.hlo": (attention, [jnp.zeros((8, 16), f32)] * 3),
    }

    def write(name, text):
        with open(os.path.join(here, name), "w") as f:
            f.write(text.replace(root + os.sep, ""))
        print(f"wrote {name} (jax {jax.__version__})")

    for name, (fn, args) in cases.items():
        write(name, hlo_text(jax.jit(fn).lower(*args)))
    for name, (fn, args) in optimized.items():
        write(name, jax.jit(fn).lower(*args).compile().as_text())

    rng = np.random.default_rng(15)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    w = (rng.standard_normal((8, 8)) / 4).astype(np.float32)
    bf16 = jnp.bfloat16
    seq, width, ffn = 32, 64, 128

    def param(*shape, scale=1.0):
        return (rng.standard_normal(shape) * scale).astype(bf16)

    encoder_inputs = [param(seq, width), param(width, width, scale=0.125), param(width, width, scale=0.125),
                      param(width, width, scale=0.125), param(width, width, scale=0.125),
                      (1 + param(width, scale=0.1)).astype(bf16), param(width, scale=0.1),
                      param(width, ffn, scale=0.125), param(ffn, scale=0.1), param(ffn, width, scale=0.09),
                      param(width, scale=0.1), (1 + param(width, scale=0.1)).astype(bf16), param(width, scale=0.1),
                      (np.arange(seq) < 27).astype(bf16)]
    causal_inputs = [rng.standard_normal((16, 32)).astype(np.float32) for _ in range(3)]
    runs = {
        "jax_encoder_layer_bf16": (encoder_layer, [encoder_inputs]),
        "jax_causal_attention": (causal_attention, [causal_inputs]),
        "jax_fori_loop": (fori, [[x, w]]),
        "jax_cond": (cond, [[np.int32(3), x], [np.int32(-2), x]]),
        "jax_switch": (switch, [[np.int32(0), x], [np.int32(1), x], [np.int32(2), x], [np.int32(7), x]]),
    }
    runs.update(vector_math_runs(np.random.default_rng(18)))
    runs.update(indexed_runs(np.random.default_rng(16)))
    runs.update(pool_runs(np.random.default_rng(17)))
    for name, (fn, input_sets) in runs.items():
        write(name + ".hlo", hlo_text(jax.jit(fn).lower(*input_sets[0])))
        arrays = []
        for inputs in input_sets:
            arrays += [as_npy(v) for v in inputs] + [as_npy(jax.jit(fn)(*inputs))]
        np.savez(os.path.join(here, name + ".npz"), *arrays)
        print(f"wrote {name}.npz ({len(input_sets)} run(s))")


if __name__ == "__main__":
    main()
