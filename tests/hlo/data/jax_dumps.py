"""Writes the JAX-made HLO fixtures beside this file (tests/hlo/jax_dump_test.cpp and
tests/compiler/jax_optimized_test.cpp read them):

    PYTHONPATH=build/python .venv/bin/python tests/hlo/data/jax_dumps.py

The text is what systole.jax.hlo_text prints for the pinned JAX (python/requirements.txt):
the module with metadata and the FileNames / FunctionNames / FileLocations / StackFrames
tables. The `_optimized` fixtures are what XLA's CPU compiler prints after optimization
(`jax.jit(fn).lower(...).compile().as_text()`): `fusion` instructions calling fused
computations, operands without shapes, scheduling attributes. The file names in those tables are
made relative to the repository so the fixtures do not depend on where the repository is checked
out.
"""
import os

import jax
import jax.numpy as jnp

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


if __name__ == "__main__":
    main()
