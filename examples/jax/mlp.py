"""A two-layer MLP written in JAX, run on Systole and checked against JAX on the CPU.

    PYTHONPATH=build/python .venv/bin/python examples/jax/mlp.py [--device ref|rtl] [--config small]

docs/PYTHON.md walks through its output.
"""
import argparse

import jax
import numpy as np

import systole.jax


def mlp(params, x):
    h = jax.nn.relu(x @ params["w1"] + params["b1"])
    return h @ params["w2"] + params["b2"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="ref")
    parser.add_argument("--config", default="small")
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    params = {
        "w1": (rng.standard_normal((784, 128)) / np.sqrt(784)).astype(np.float32),
        "b1": np.zeros(128, np.float32),
        "w2": (rng.standard_normal((128, 10)) / np.sqrt(128)).astype(np.float32),
        "b2": np.zeros(10, np.float32),
    }
    x = rng.standard_normal((32, 784)).astype(np.float32)

    on_systole = systole.jax.jit(mlp, device=args.device, config=args.config)
    y = on_systole(params, x)
    expected = np.asarray(jax.jit(mlp)(params, x))
    error = np.max(np.abs(y - expected)) / np.max(np.abs(expected))
    print(on_systole.report())
    print(f"max |systole - jax| / max |jax| = {error:.2e} (bf16 operands, f32 accumulation)")


if __name__ == "__main__":
    main()
