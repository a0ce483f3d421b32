"""batch-norm-training, -inference and -grad — the ops TensorFlow's XLA dumps carry (JAX
expands batch norm into primitives) — run on the host of the `ref` device and are judged by JAX:
the same normalization written in jax.numpy, and its gradient by jax.vjp, on random data, for a
channels-last and a channels-first layout."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import systole

jax.config.update("jax_platforms", "cpu")

EPSILON = 1e-3
LAYOUTS = {  # name: (dims, feature_index)
    "nhwc": ((4, 3, 3, 5), 3),
    "nchw": ((4, 5, 3, 3), 1),
}


def shape_text(dims):
    return f"f32[{','.join(str(d) for d in dims)}]"


def module(op, dims, feature_index):
    x, f = shape_text(dims), f"f32[{dims[feature_index]}]"
    attributes = f"epsilon={EPSILON}, feature_index={feature_index}"
    if op == "training":
        return (f"HloModule bn_training\nENTRY e {{\n  x = {x} parameter(0)\n  s = {f} parameter(1)\n"
                f"  o = {f} parameter(2)\n  ROOT t = ({x}, {f}, {f}) batch-norm-training(x, s, o), {attributes}\n}}\n")
    if op == "inference":
        return (f"HloModule bn_inference\nENTRY e {{\n  x = {x} parameter(0)\n  s = {f} parameter(1)\n"
                f"  o = {f} parameter(2)\n  m = {f} parameter(3)\n  v = {f} parameter(4)\n"
                f"  ROOT y = {x} batch-norm-inference(x, s, o, m, v), {attributes}\n}}\n")
    return (f"HloModule bn_grad\nENTRY e {{\n  x = {x} parameter(0)\n  s = {f} parameter(1)\n"
            f"  m = {f} parameter(2)\n  v = {f} parameter(3)\n  dy = {x} parameter(4)\n"
            f"  ROOT g = ({x}, {f}, {f}) batch-norm-grad(x, s, m, v, dy), {attributes}\n}}\n")


def per_feature(values, rank, feature_index):
    shape = [1] * rank
    shape[feature_index] = -1
    return values.reshape(shape)


def jax_normalize(x, scale, offset, mean, variance, feature_index):
    r = x.ndim
    return ((x - per_feature(mean, r, feature_index)) * jax.lax.rsqrt(per_feature(variance, r, feature_index) + EPSILON)
            * per_feature(scale, r, feature_index) + per_feature(offset, r, feature_index))


def jax_training(x, scale, offset, feature_index):
    axes = tuple(d for d in range(x.ndim) if d != feature_index)
    mean, variance = jnp.mean(x, axis=axes), jnp.var(x, axis=axes)
    return jax_normalize(x, scale, offset, mean, variance, feature_index), mean, variance


def random_inputs(dims, feature_index, seed):
    rng = np.random.default_rng(seed)
    features = dims[feature_index]
    x = (rng.standard_normal(dims) * 2 + 0.5).astype(np.float32)
    scale = rng.uniform(0.5, 2.0, features).astype(np.float32)
    offset = rng.standard_normal(features).astype(np.float32)
    return x, scale, offset


@pytest.mark.parametrize("layout", LAYOUTS)
def test_training_matches_jax(ref, layout):
    dims, fi = LAYOUTS[layout]
    x, scale, offset = random_inputs(dims, fi, seed=1)
    program = systole.compile(module("training", dims, fi))
    outputs = ref.run(program, [x, scale, offset]).outputs
    for got, want in zip(outputs, jax_training(jnp.asarray(x), scale, offset, fi)):
        np.testing.assert_allclose(got, np.asarray(want), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_inference_matches_jax(ref, layout):
    dims, fi = LAYOUTS[layout]
    x, scale, offset = random_inputs(dims, fi, seed=2)
    rng = np.random.default_rng(3)
    mean = rng.standard_normal(dims[fi]).astype(np.float32)
    variance = rng.uniform(0.1, 3.0, dims[fi]).astype(np.float32)
    program = systole.compile(module("inference", dims, fi))
    got = ref.run(program, [x, scale, offset, mean, variance]).outputs[0]
    np.testing.assert_allclose(got, np.asarray(jax_normalize(jnp.asarray(x), scale, offset, mean, variance, fi)),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_grad_matches_jax_vjp_of_the_training_output(ref, layout):
    dims, fi = LAYOUTS[layout]
    x, scale, offset = random_inputs(dims, fi, seed=4)
    dy = np.random.default_rng(5).standard_normal(dims).astype(np.float32)
    _, mean, variance = jax_training(jnp.asarray(x), scale, offset, fi)
    _, vjp = jax.vjp(lambda a, s, o: jax_training(a, s, o, fi)[0], jnp.asarray(x), jnp.asarray(scale),
                     jnp.asarray(offset))
    program = systole.compile(module("grad", dims, fi))
    outputs = ref.run(program, [x, scale, np.asarray(mean), np.asarray(variance), dy]).outputs
    for got, want in zip(outputs, vjp(jnp.asarray(dy))):
        np.testing.assert_allclose(got, np.asarray(want), rtol=1e-4, atol=1e-4)


def test_batch_norm_runs_on_the_host_and_says_why():
    dims, fi = LAYOUTS["nhwc"]
    placement = systole.compile(module("training", dims, fi)).placement
    reasons = [step.get("reason", "") for step in placement if "batch-norm" in str(step)]
    assert reasons and all("batch normalization runs on the host" in r for r in reasons), placement
