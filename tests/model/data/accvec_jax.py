"""Writes accvec_jax.npz beside this file: ACCVEC's operations as JAX computes them in float32 on
the CPU, for tests/model/accvec_test.cpp (AccVecJax.*). Run with the pinned JAX
(python/requirements.txt):

    .venv/bin/python tests/model/data/accvec_jax.py

Arrays, in this order (arr_0 …; all int32: float32 bit patterns, so that NaN payloads and
signalling NaNs survive the file): a, b — every pair of 48 special values, then random operands of the kinds the C++ tests
draw (raw bits, subnormals, tiny and huge magnitudes, nearby exponents) — and one result array
per op: add, sub, mul, max, min, div, sqrt (of a).
"""
import os

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_platforms", "cpu")

SPECIAL_MAGNITUDES = [
    0x00000000, 0x00000001, 0x00000002, 0x003FFFFF, 0x00400000, 0x007FFFFF, 0x00800000,
    0x00800001, 0x0B800000, 0x1F800000, 0x3F000000, 0x3F800000, 0x3F800001, 0x3FC00000,
    0x40000000, 0x5F800000, 0x7F000000, 0x7F7FFFFF, 0x7F800000, 0x7F800001, 0x7FA00000,
    0x7FC00000, 0x7FC00001, 0x7FFFFFFF,
]


def operands(rng, n):
    kind = rng.integers(0, 5, n)
    sign = rng.integers(0, 2, n, dtype=np.uint32) << np.uint32(31)
    raw = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    frac = raw & np.uint32(0x7FFFFF)
    tiny_or_huge = np.where(rng.integers(0, 2, n) == 1, 1 + rng.integers(0, 40, n), 214 + rng.integers(0, 40, n))
    moderate = 120 + rng.integers(0, 16, n)
    out = np.where(kind == 0, raw,
          np.where(kind == 1, sign | frac,
          np.where(kind == 2, sign | (tiny_or_huge.astype(np.uint32) << np.uint32(23)) | frac,
                   sign | (moderate.astype(np.uint32) << np.uint32(23)) | frac)))
    return out.astype(np.uint32)


def main():
    specials = np.array([s | m for s in (0, 0x80000000) for m in SPECIAL_MAGNITUDES], np.uint32)
    a = np.repeat(specials, len(specials))
    b = np.tile(specials, len(specials))
    rng = np.random.default_rng(17)
    n = 2000
    a = np.concatenate([a, operands(rng, n)])
    b = np.concatenate([b, operands(rng, n)])
    x, y = jnp.asarray(a.view(np.float32)), jnp.asarray(b.view(np.float32))
    ops = {
        "add": jnp.add, "sub": jnp.subtract, "mul": jnp.multiply, "max": jnp.maximum,
        "min": jnp.minimum, "div": jnp.divide, "sqrt": lambda u, v: jnp.sqrt(u),
    }
    results = {name: np.asarray(jax.jit(f)(x, y)).view(np.int32) for name, f in ops.items()}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "accvec_jax.npz")
    np.savez(path, a.view(np.int32), b.view(np.int32), *results.values())
    print(f"wrote {path}: {len(a)} pairs, JAX {jax.__version__}")


if __name__ == "__main__":
    main()
