"""Plain-JAX models the project has never seen: a seed draws a random composition of dense,
convolution, pooling, normalization and attention layers (shapes, strides, paddings, widths,
activations, residual connections, masks), written with jax.numpy, jax.nn and jax.lax as a
user would write them, not with the zoo's helpers (examples/jax/zoo.py).

    model = random_model(seed)   # a RandomModel: description, apply(params, x), params, x

test_unseen_models.py runs each through systole.jax.jit on `ref` and compares it with JAX on
the CPU. `python random_models.py SEED` prints a model's layers.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

DIMENSIONS = ("NHWC", "HWIO", "NHWC")
ACTIVATIONS: dict[str, Callable[[Any], Any]] = {
    "relu": jax.nn.relu,
    "relu6": jax.nn.relu6,
    "gelu_tanh": lambda x: jax.nn.gelu(x, approximate=True),
    "gelu_erf": lambda x: jax.nn.gelu(x, approximate=False),
    "tanh": jnp.tanh,
    "sigmoid": jax.nn.sigmoid,
    "silu": jax.nn.silu,
    "leaky_relu": jax.nn.leaky_relu,
}


@dataclasses.dataclass
class RandomModel:
    seed: int
    layers: list[str]                      # one line per layer, for failure messages
    apply: Callable[..., Any]              # apply(params, x)
    params: dict[str, np.ndarray]
    x: np.ndarray

    @property
    def description(self) -> str:
        return f"seed {self.seed}: " + " -> ".join(self.layers)


class _Builder:
    """Draws layers and their parameters; each layer is a closure over its parameter names."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.params: dict[str, np.ndarray] = {}
        self.layers: list[str] = []
        self.steps: list[Callable[[dict, Any], Any]] = []
        self.input_shape: tuple[int, ...] = ()

    def pick(self, options):
        return options[int(self.rng.integers(len(options)))]

    def param(self, shape, scale: float, offset: float = 0.0) -> str:
        name = f"p{len(self.params)}"
        self.params[name] = (offset + scale * self.rng.standard_normal(shape)).astype(np.float32)
        return name

    def add(self, text: str, step: Callable[[dict, Any], Any]) -> None:
        self.layers.append(text)
        self.steps.append(step)

    # ---- layers: each returns the new activation shape ----------------------------------------

    def dense(self, shape, width: int, activation: str | None):
        fan_in = shape[-1]
        w = self.param((fan_in, width), math.sqrt(2.0 / fan_in))
        b = self.param((width,), 0.1)
        act = ACTIVATIONS[activation] if activation else (lambda v: v)
        self.add(f"dense {fan_in}->{width}" + (f" {activation}" if activation else ""),
                 lambda p, v: act(jnp.dot(v, p[w]) + p[b]))
        return (*shape[:-1], width)

    def conv(self, shape, channels: int, kernel: int, stride: int, padding: str, activation: str,
             depthwise: bool):
        n, h, w_, c = shape
        groups = c if depthwise else 1
        out = c if depthwise else channels
        w = self.param((kernel, kernel, c // groups, out), math.sqrt(2.0 / (kernel * kernel * c // groups)))
        b = self.param((out,), 0.1)
        act = ACTIVATIONS[activation]
        self.add(f"{'depthwise ' if depthwise else ''}conv {kernel}x{kernel}/{stride} {padding} {c}->{out} {activation}",
                 lambda p, v: act(jax.lax.conv_general_dilated(v, p[w], (stride, stride), padding,
                                                               dimension_numbers=DIMENSIONS,
                                                               feature_group_count=groups) + p[b]))
        if padding == "SAME":
            return (n, -(-h // stride), -(-w_ // stride), out)
        return (n, (h - kernel) // stride + 1, (w_ - kernel) // stride + 1, out)

    def pool(self, shape, kind: str, size: int, stride: int):
        n, h, w, c = shape
        window, strides = (1, size, size, 1), (1, stride, stride, 1)
        if kind == "max":
            self.add(f"max pool {size}/{stride}",
                     lambda p, v: jax.lax.reduce_window(v, -jnp.inf, jax.lax.max, window, strides, "VALID"))
        else:
            self.add(f"avg pool {size}/{stride}",
                     lambda p, v: jax.lax.reduce_window(v, 0.0, jax.lax.add, window, strides, "VALID") / (size * size))
        return (n, (h - size) // stride + 1, (w - size) // stride + 1, c)

    def batch_norm(self, shape):
        c = shape[-1]
        mean, var = self.param((c,), 0.1), self.param((c,), 0.2, 1.0)
        gamma, beta = self.param((c,), 0.1, 1.0), self.param((c,), 0.1)
        self.params[var] = np.abs(self.params[var]) + 0.25
        self.add("batch norm (inference)",
                 lambda p, v: (v - p[mean]) * jax.lax.rsqrt(p[var] + 1e-5) * p[gamma] + p[beta])
        return shape

    def layer_norm(self, shape, rms: bool):
        d = shape[-1]
        gamma, beta = self.param((d,), 0.1, 1.0), self.param((d,), 0.1)

        def norm(p, v):
            if rms:
                return v * jax.lax.rsqrt(jnp.mean(v * v, axis=-1, keepdims=True) + 1e-6) * p[gamma]
            return jax.nn.standardize(v, axis=-1, epsilon=1e-5) * p[gamma] + p[beta]

        self.add("rms norm" if rms else "layer norm", norm)
        return shape

    def attention(self, shape, heads: int, causal: bool, residual: bool):
        b, t, d = shape
        names = {k: self.param((d, d), math.sqrt(1.0 / d)) for k in ("q", "k", "v", "o")}
        head = d // heads

        def attend(p, v):
            def split(z):
                return z.reshape(b, t, heads, head)
            q, k, val = (split(jnp.dot(v, p[names[n]])) for n in ("q", "k", "v"))
            mask = jnp.tril(jnp.ones((t, t), bool)) if causal else None
            out = jax.nn.dot_product_attention(q, k, val, mask=mask[None, None] if causal else None)
            out = jnp.dot(out.reshape(b, t, d), p[names["o"]])
            return v + out if residual else out

        self.add(f"{'causal ' if causal else ''}attention {heads} heads d={d}" + (" + residual" if residual else ""),
                 attend)
        return shape


def _image_model(m: _Builder) -> tuple[Any, ...]:
    n, size, channels = int(m.pick([1, 2])), int(m.pick([8, 12, 16])), int(m.pick([1, 3, 4]))
    shape = m.input_shape = (n, size, size, channels)
    for layer in range(int(m.rng.integers(2, 5))):
        kind = "conv" if layer == 0 else m.pick(["conv", "conv", "depthwise", "pool", "batch_norm"])
        if kind in ("conv", "depthwise") and (kind == "conv" or shape[-1] > 1):
            kernel = int(m.pick([1, 3, 5])) if min(shape[1:3]) >= 5 else 1
            stride = int(m.pick([1, 1, 2])) if min(shape[1:3]) >= 4 else 1
            shape = m.conv(shape, int(m.pick([4, 8, 16])), kernel, stride, m.pick(["SAME", "VALID"]),
                           m.pick(list(ACTIVATIONS)), depthwise=kind == "depthwise")
        elif kind == "pool" and min(shape[1:3]) >= 4:
            shape = m.pool(shape, m.pick(["max", "avg"]), 2, int(m.pick([1, 2])))
        else:
            shape = m.batch_norm(shape)
    if m.pick([True, False]):
        m.add("global average pool", lambda p, v: jnp.mean(v, axis=(1, 2)))
        shape = (shape[0], shape[-1])
    else:
        flat = int(np.prod(shape[1:]))
        m.add("flatten", lambda p, v: v.reshape(v.shape[0], -1))
        shape = (shape[0], flat)
    return shape


def _sequence_model(m: _Builder) -> tuple[Any, ...]:
    b, t, d_in = int(m.pick([1, 2])), int(m.pick([4, 8, 16])), int(m.pick([8, 16, 32]))
    heads = int(m.pick([1, 2, 4]))
    m.input_shape = (b, t, d_in)
    shape = m.dense(m.input_shape, heads * int(m.pick([4, 8, 16])), None)
    for block in range(int(m.rng.integers(1, 4))):
        kind = "attention" if block == 0 else m.pick(["attention", "mlp", "norm"])
        if kind == "attention":
            shape = m.attention(shape, heads, causal=m.pick([True, False]), residual=m.pick([True, False]))
        elif kind == "mlp":
            d = shape[-1]
            shape = m.dense(shape, int(m.pick([2, 4])) * d, m.pick(list(ACTIVATIONS)))
            shape = m.dense(shape, d, None)
        else:
            shape = m.layer_norm(shape, rms=m.pick([True, False]))
    m.add("mean over the sequence", lambda p, v: jnp.mean(v, axis=1))
    return (shape[0], shape[-1])


def random_model(seed: int) -> RandomModel:
    """Even seeds draw an image model (convolutions, pooling, batch norm), odd seeds a sequence
    model (attention, MLPs, layer and RMS norms); both end in a dense classifier and, drawn too,
    a softmax or log-softmax."""
    m = _Builder(seed)
    shape = _image_model(m) if seed % 2 == 0 else _sequence_model(m)
    shape = m.dense(shape, int(m.pick([3, 10, 16])), None)
    head = m.pick(["logits", "softmax", "log_softmax"])
    if head != "logits":
        fn = jax.nn.softmax if head == "softmax" else jax.nn.log_softmax
        m.add(head, lambda p, v: fn(v, axis=-1))
    steps = list(m.steps)

    def apply(params, x):
        for step in steps:
            x = step(params, x)
        return x

    x = m.rng.standard_normal(m.input_shape).astype(np.float32)
    return RandomModel(seed, m.layers, apply, m.params, x)


def main() -> None:
    for seed in (int(s) for s in sys.argv[1:] or ["0"]):
        print(random_model(seed).description)


if __name__ == "__main__":
    main()
