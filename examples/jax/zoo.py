"""A model zoo in plain JAX (no framework): each model is `init(rng) -> (params, inputs)` and
`apply(params, *inputs)`, small enough to run on the golden model in seconds. python/tests/
test_zoo.py runs every one with systole.jax.jit and compares it with JAX on the CPU;
`python examples/jax/zoo.py [NAME ...] [--device ref|rtl]` prints their placement and cycles.

    mlp          784-128-10, ReLU
    lenet5       LeNet-5 on 28x28 (conv 5x5 -> pool -> conv 5x5 -> pool -> 3 dense layers)
    resnet18     ResNet-18 (basic blocks, batch norm in inference form) on 32x32, 10 classes
    mobilenetv2  MobileNetV2 (inverted residuals, depthwise 3x3, ReLU6), width 0.5, on 32x32
    bert_layer   a BERT-style encoder layer: multi-head self-attention, layer norms, GELU MLP
    gpt_block    a GPT-style decoder block: causal self-attention, pre-layer-norm, GELU MLP
"""

from __future__ import annotations

import math
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

NHWC = ("NHWC", "HWIO", "NHWC")


class Init:
    """Deterministic parameters: He-style scaling so activations keep their size."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)

    def weight(self, *shape: int, fan_in: int | None = None) -> np.ndarray:
        fan_in = fan_in or int(np.prod(shape[:-1]))
        return (self.rng.standard_normal(shape) * math.sqrt(2.0 / fan_in)).astype(np.float32)

    def vector(self, n: int, low: float = -0.1, high: float = 0.1) -> np.ndarray:
        return self.rng.uniform(low, high, n).astype(np.float32)

    def batch_norm(self, c: int) -> dict[str, np.ndarray]:
        return {"scale": self.vector(c, 0.8, 1.2), "shift": self.vector(c), "mean": self.vector(c),
                "var": self.vector(c, 0.5, 1.5)}

    def input(self, *shape: int) -> np.ndarray:
        return self.rng.standard_normal(shape).astype(np.float32)


def conv(x, w, stride=1, padding="SAME", groups=1):
    return jax.lax.conv_general_dilated(x, w, (stride, stride), padding, dimension_numbers=NHWC,
                                        feature_group_count=groups)


def batch_norm(x, p, eps=1e-5):
    return (x - p["mean"]) * (p["scale"] / jnp.sqrt(p["var"] + eps)) + p["shift"]


def max_pool(x, size=2, stride=2):
    return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, size, size, 1), (1, stride, stride, 1), "VALID")


def layer_norm(x, p, eps=1e-5):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / jnp.sqrt(var + eps) * p["scale"] + p["shift"]


# ---- MLP, LeNet-5 ------------------------------------------------------------------------------

def mlp_init(seed=0):
    i = Init(seed)
    params = {"w1": i.weight(784, 128), "b1": i.vector(128), "w2": i.weight(128, 10), "b2": i.vector(10)}
    return params, (i.input(16, 784),)


def mlp(params, x):
    h = jax.nn.relu(x @ params["w1"] + params["b1"])
    return h @ params["w2"] + params["b2"]


def lenet5_init(seed=0):
    i = Init(seed)
    params = {
        "c1": i.weight(5, 5, 1, 6), "b1": i.vector(6), "c2": i.weight(5, 5, 6, 16), "b2": i.vector(16),
        "f1": i.weight(4 * 4 * 16, 120), "g1": i.vector(120), "f2": i.weight(120, 84), "g2": i.vector(84),
        "f3": i.weight(84, 10), "g3": i.vector(10),
    }
    return params, (i.input(4, 28, 28, 1),)


def lenet5(params, x):
    y = max_pool(jax.nn.relu(conv(x, params["c1"], padding="VALID") + params["b1"]))   # 24 -> 12
    y = max_pool(jax.nn.relu(conv(y, params["c2"], padding="VALID") + params["b2"]))   # 8 -> 4
    y = y.reshape(y.shape[0], -1)
    y = jax.nn.relu(y @ params["f1"] + params["g1"])
    y = jax.nn.relu(y @ params["f2"] + params["g2"])
    return y @ params["f3"] + params["g3"]


# ---- ResNet-18 ---------------------------------------------------------------------------------

RESNET18_STAGES = [(64, 1), (128, 2), (256, 2), (512, 2)]


def resnet18_init(seed=0, classes=10):
    i = Init(seed)
    params: dict[str, Any] = {"stem": i.weight(3, 3, 3, 64), "stem_bn": i.batch_norm(64), "blocks": []}
    c_in = 64
    for c, stride in RESNET18_STAGES:
        for b in range(2):
            s = stride if b == 0 else 1
            block = {"w1": i.weight(3, 3, c_in, c), "bn1": i.batch_norm(c), "w2": i.weight(3, 3, c, c),
                     "bn2": i.batch_norm(c)}
            if s != 1 or c_in != c:
                block["proj"], block["proj_bn"] = i.weight(1, 1, c_in, c), i.batch_norm(c)
            params["blocks"].append(block)
            c_in = c
    params["fc"], params["fc_b"] = i.weight(512, classes), i.vector(classes)
    return params, (i.input(1, 32, 32, 3),)


def resnet18(params, x):
    y = jax.nn.relu(batch_norm(conv(x, params["stem"]), params["stem_bn"]))  # CIFAR stem: 3x3, no pool
    strides = [s if b == 0 else 1 for _, s in RESNET18_STAGES for b in range(2)]
    for block, stride in zip(params["blocks"], strides):
        h = jax.nn.relu(batch_norm(conv(y, block["w1"], stride), block["bn1"]))
        h = batch_norm(conv(h, block["w2"]), block["bn2"])
        shortcut = batch_norm(conv(y, block["proj"], stride), block["proj_bn"]) if "proj" in block else y
        y = jax.nn.relu(h + shortcut)
    y = y.mean(axis=(1, 2))
    return y @ params["fc"] + params["fc_b"]


# ---- MobileNetV2 -------------------------------------------------------------------------------

# (expansion, channels, repeats, stride) at width 0.5, the CIFAR variant (first strides 1).
MOBILENETV2_CONFIG = [(1, 8, 1, 1), (6, 12, 2, 1), (6, 16, 3, 2), (6, 32, 4, 2), (6, 48, 3, 1), (6, 80, 3, 2),
                      (6, 160, 1, 1)]


def mobilenetv2_init(seed=0, classes=10):
    i = Init(seed)
    params: dict[str, Any] = {"stem": i.weight(3, 3, 3, 16), "stem_bn": i.batch_norm(16), "blocks": []}
    c_in = 16
    for t, c, n, s in MOBILENETV2_CONFIG:
        for r in range(n):
            hidden = c_in * t
            block = {}
            if t != 1:
                block["expand"], block["expand_bn"] = i.weight(1, 1, c_in, hidden), i.batch_norm(hidden)
            block["dw"], block["dw_bn"] = i.weight(3, 3, 1, hidden, fan_in=9), i.batch_norm(hidden)
            block["project"], block["project_bn"] = i.weight(1, 1, hidden, c), i.batch_norm(c)
            params["blocks"].append(block)
            c_in = c
    params["head"], params["head_bn"] = i.weight(1, 1, c_in, 640), i.batch_norm(640)
    params["fc"], params["fc_b"] = i.weight(640, classes), i.vector(classes)
    return params, (i.input(1, 32, 32, 3),)


def mobilenetv2(params, x):
    relu6 = lambda v: jnp.clip(v, 0, 6)  # noqa: E731
    y = relu6(batch_norm(conv(x, params["stem"]), params["stem_bn"]))
    strides = [s if r == 0 else 1 for _, _, n, s in MOBILENETV2_CONFIG for r in range(n)]
    for block, stride in zip(params["blocks"], strides):
        h = relu6(batch_norm(conv(y, block["expand"]), block["expand_bn"])) if "expand" in block else y
        h = relu6(batch_norm(conv(h, block["dw"], stride, groups=h.shape[-1]), block["dw_bn"]))
        h = batch_norm(conv(h, block["project"]), block["project_bn"])
        y = y + h if stride == 1 and y.shape == h.shape else h
    y = relu6(batch_norm(conv(y, params["head"]), params["head_bn"]))
    return y.mean(axis=(1, 2)) @ params["fc"] + params["fc_b"]


# ---- Transformer blocks ------------------------------------------------------------------------

def _attention_init(i: Init, d: int, ff: int):
    return {"wq": i.weight(d, d), "wk": i.weight(d, d), "wv": i.weight(d, d), "wo": i.weight(d, d),
            "bq": i.vector(d), "bk": i.vector(d), "bv": i.vector(d), "bo": i.vector(d),
            "ln1": {"scale": i.vector(d, 0.9, 1.1), "shift": i.vector(d)},
            "ln2": {"scale": i.vector(d, 0.9, 1.1), "shift": i.vector(d)},
            "w1": i.weight(d, ff), "b1": i.vector(ff), "w2": i.weight(ff, d), "b2": i.vector(d)}


def _self_attention(p, x, heads, causal):
    b, t, d = x.shape
    split = lambda v: v.reshape(b, t, heads, d // heads).transpose(0, 2, 1, 3)  # noqa: E731
    q, k, v = (split(x @ p[w] + p[bias]) for w, bias in (("wq", "bq"), ("wk", "bk"), ("wv", "bv")))
    scores = jnp.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(d // heads)
    if causal:
        scores = jnp.where(jnp.tril(jnp.ones((t, t), bool)), scores, -1e9)
    out = jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(scores, axis=-1), v)
    return out.transpose(0, 2, 1, 3).reshape(b, t, d) @ p["wo"] + p["bo"]


def bert_layer_init(seed=0, d=64, ff=128):
    i = Init(seed)
    return _attention_init(i, d, ff), (i.input(2, 16, d),)


def bert_layer(params, x, heads=4):
    """Post-layer-norm encoder layer (BERT): x = LN(x + MHA(x)); x = LN(x + MLP(x))."""
    x = layer_norm(x + _self_attention(params, x, heads, causal=False), params["ln1"])
    h = jax.nn.gelu(x @ params["w1"] + params["b1"], approximate=True) @ params["w2"] + params["b2"]
    return layer_norm(x + h, params["ln2"])


def gpt_block_init(seed=0, d=64, ff=256):
    i = Init(seed)
    return _attention_init(i, d, ff), (i.input(2, 16, d),)


def gpt_block(params, x, heads=4):
    """Pre-layer-norm decoder block (GPT-2): x += MHA(LN(x)) causally; x += MLP(LN(x))."""
    x = x + _self_attention(params, layer_norm(x, params["ln1"]), heads, causal=True)
    h = layer_norm(x, params["ln2"])
    return x + jax.nn.gelu(h @ params["w1"] + params["b1"], approximate=True) @ params["w2"] + params["b2"]


ZOO: dict[str, tuple[Callable, Callable]] = {
    "mlp": (mlp_init, mlp),
    "lenet5": (lenet5_init, lenet5),
    "resnet18": (resnet18_init, resnet18),
    "mobilenetv2": (mobilenetv2_init, mobilenetv2),
    "bert_layer": (bert_layer_init, bert_layer),
    "gpt_block": (gpt_block_init, gpt_block),
}


def main():
    import argparse
    import time

    import systole.jax

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", default=list(ZOO))
    parser.add_argument("--device", default="ref")
    parser.add_argument("--config", default="small")
    parser.add_argument("--placement", action="store_true", help="print every step")
    args = parser.parse_args()
    for name in args.names:
        init, apply = ZOO[name]
        params, inputs = init()
        fast = systole.jax.jit(apply, device=args.device, config=args.config)
        start = time.perf_counter()
        y = fast(params, *inputs)
        seconds = time.perf_counter() - start
        expected = np.asarray(jax.jit(apply)(params, *inputs))
        error = float(np.max(np.abs(y - expected)) / np.max(np.abs(expected)))
        s = fast.stats
        print(f"{name:12} {fast.program.device_steps:3} device / {fast.program.host_steps:4} host steps  "
              f"{s['cycles']:>10} cycles  MXU {100 * s['mxu_utilization']:5.1f}%  error {error:.1e}  {seconds:.1f} s")
        if args.placement:
            print(fast.report())


if __name__ == "__main__":
    main()
