"""systole.jax.jit against JAX's own CPU results.

Tolerances (max |systole - jax| / max |jax| per output, conftest.relative_error): bf16
configurations round dot / convolution operands to bf16 and accumulate in f32, JAX on the CPU
computes in f32 throughout, so results differ by about 2^-8 per layer: 2^-6 is the bound for
these shallow networks (the compiler tests' bound, docs/COMPILER.md). bf16 inputs and outputs:
2^-5 (the output itself is rounded to bf16 once more). int8 programs: exact.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import systole
import systole.jax
import jax.scipy.special  # noqa: F401  (jax.scipy is not imported by jax itself)
from conftest import relative_error

F32_TOLERANCE = 2.0**-6
BF16_TOLERANCE = 2.0**-5


def mlp(params, x):
    h = jax.nn.relu(x @ params["w1"] + params["b1"])
    return h @ params["w2"] + params["b2"]


def mlp_params(rng, d_in=32, d_hidden=64, d_out=10, dtype=np.float32):
    return {
        "w1": (rng.standard_normal((d_in, d_hidden)) / np.sqrt(d_in)).astype(dtype),
        "b1": rng.uniform(-0.5, 0.5, d_hidden).astype(dtype),
        "w2": (rng.standard_normal((d_hidden, d_out)) / np.sqrt(d_hidden)).astype(dtype),
        "b2": rng.uniform(-0.5, 0.5, d_out).astype(dtype),
    }


def cnn(params, x):
    dn = ("NHWC", "HWIO", "NHWC")
    y = jax.lax.conv_general_dilated(x, params["k1"], (1, 1), "SAME", dimension_numbers=dn) + params["b1"]
    y = jax.nn.relu(y)
    y = jax.lax.reduce_window(y, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    y = jax.nn.relu(jax.lax.conv_general_dilated(y, params["k2"], (1, 1), "SAME", dimension_numbers=dn))
    return y.reshape(y.shape[0], -1) @ params["w3"]


def cnn_params(rng):
    return {
        "k1": (rng.standard_normal((3, 3, 3, 8)) / np.sqrt(27)).astype(np.float32),
        "b1": rng.uniform(-0.2, 0.2, 8).astype(np.float32),
        "k2": (rng.standard_normal((3, 3, 8, 16)) / np.sqrt(72)).astype(np.float32),
        "w3": (rng.standard_normal((4 * 4 * 16, 10)) / np.sqrt(256)).astype(np.float32),
    }


def test_mlp_matches_jax_and_reports_placement():
    rng = np.random.default_rng(0)
    params, x = mlp_params(rng), rng.standard_normal((8, 32)).astype(np.float32)
    fast = systole.jax.jit(mlp)
    y = fast(params, x)
    expected = np.asarray(jax.jit(mlp)(params, x))
    assert isinstance(y, np.ndarray) and y.shape == (8, 10) and y.dtype == np.float32
    assert relative_error(y, expected) <= F32_TOLERANCE
    # Both dots ran on the MXU, their bias and ReLU fused; the estimate is what ref counted.
    device = [s for s in fast.placement if s["kind"] == "device"]
    assert len(device) == 2 and all(s["cycles"] > 0 for s in device)
    assert fast.stats["cycles"] == fast.estimated_cycles > 0
    # The placement names the Python line each device step came from.
    assert all("test_jax.py:" in s["source"] and "(mlp)" in s["source"] for s in device)
    report = fast.report()
    assert "device" in report and "test_jax.py:" in report and "cycles" in report


def test_cache_per_signature():
    rng = np.random.default_rng(1)
    params = mlp_params(rng)
    fast = systole.jax.jit(mlp)
    fast(params, rng.standard_normal((4, 32)).astype(np.float32))
    fast(params, rng.standard_normal((4, 32)).astype(np.float32))
    assert fast.cache_size == 1
    y = fast(params, rng.standard_normal((6, 32)).astype(np.float32))
    assert fast.cache_size == 2 and y.shape == (6, 10)
    # A JAX array is the same signature as the NumPy one.
    fast(params, jnp.ones((6, 32), jnp.float32))
    assert fast.cache_size == 2


def test_small_cnn_matches_jax():
    rng = np.random.default_rng(2)
    params, x = cnn_params(rng), rng.standard_normal((2, 8, 8, 3)).astype(np.float32)
    fast = systole.jax.jit(cnn)
    y = fast(params, x)
    assert y.shape == (2, 10)
    assert relative_error(y, np.asarray(jax.jit(cnn)(params, x))) <= F32_TOLERANCE
    # A device step is named by its last instruction (the fused ReLU); its kernel says what it is.
    kernels = [s["kernel"] for s in fast.placement if s["kind"] == "device"]
    assert sum(k.startswith("conv") for k in kernels) == 2 and any(k.startswith("maxpool") for k in kernels)
    assert any(k.startswith("gemm") for k in kernels)


def test_bf16_inputs_and_outputs():
    rng = np.random.default_rng(3)
    params = mlp_params(rng, dtype=jnp.bfloat16)
    x = rng.standard_normal((8, 32)).astype(jnp.bfloat16)
    y = systole.jax.jit(mlp)(params, x)
    assert y.dtype == jnp.bfloat16
    expected = np.asarray(jax.jit(mlp)(params, x)).astype(np.float32)
    assert relative_error(y.astype(np.float32), expected) <= BF16_TOLERANCE


def test_int8_dense_is_exact_on_an_int8_configuration():
    def dense(x, w, b):
        return jax.lax.dot(x, w, preferred_element_type=jnp.int32) + b

    rng = np.random.default_rng(4)
    x = rng.integers(-128, 128, (8, 48), dtype=np.int8)
    w = rng.integers(-128, 128, (48, 24), dtype=np.int8)
    b = rng.integers(-1000, 1000, (24,), dtype=np.int32)
    fast = systole.jax.jit(dense, config="small-int8")
    y = fast(x, w, b)
    assert y.dtype == np.int32
    np.testing.assert_array_equal(y, np.asarray(jax.jit(dense)(x, w, b)))
    # The s8 x s8 -> s32 dot runs on the int8 MXU with the bias add fused into its drain.
    device = [s for s in fast.placement if s["kind"] == "device"]
    assert len(device) == 1 and device[0]["kernel"].startswith("gemm")
    assert device[0]["covers"][0].startswith("dot") and device[0]["opcode"] == "add"


def test_pytrees_static_arguments_and_keywords():
    def f(x, params, act, *, scale):
        y = x @ params["w"]
        y = jax.nn.relu(y) if act == "relu" else y
        return {"y": y * scale, "parts": (y, params["w"].sum())}

    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 16)).astype(np.float32)
    params = {"w": rng.standard_normal((16, 16)).astype(np.float32)}
    fast = systole.jax.jit(f, static_argnums=2, static_argnames="scale")
    for act in ("relu", "none"):
        out = fast(x, params, act, scale=2.0)
        ref = jax.jit(f, static_argnums=2, static_argnames="scale")(x, params, act, scale=2.0)
        assert jax.tree_util.tree_structure(out) == jax.tree_util.tree_structure(ref)
        for a, b in zip(jax.tree_util.tree_leaves(out), jax.tree_util.tree_leaves(ref)):
            assert relative_error(a, b) <= F32_TOLERANCE
    assert fast.cache_size == 2
    with pytest.raises(TypeError, match="hashable"):
        fast(x, params, ["unhashable"], scale=2.0)


def test_decorator_form_and_unused_arguments():
    @systole.jax.jit(config="small")
    def g(x, unused):
        return x @ x.T

    x = np.eye(16, dtype=np.float32) * 2
    np.testing.assert_allclose(g(x, np.zeros(3, np.float32)), x @ x.T, rtol=0, atol=0)
    with pytest.raises(RuntimeError, match="not been called"):
        systole.jax.jit(mlp).report()


def test_mlp_on_rtl_equals_ref(rtl_available):
    if not rtl_available:
        pytest.skip("this build has no Verilated RTL (SYSTOLE_RTL=OFF)")
    rng = np.random.default_rng(6)
    params, x = mlp_params(rng, d_in=16, d_hidden=16, d_out=16), rng.standard_normal((4, 16)).astype(np.float32)
    on_ref = systole.jax.jit(mlp, device="ref")(params, x)
    on_rtl = systole.jax.jit(mlp, device="rtl")
    # rtl vs ref: the same compiled model gives bit-identical outputs (docs/COMPILER.md).
    np.testing.assert_array_equal(on_rtl(params, x), on_ref)
    assert on_rtl.stats["cycles"] > 0


def test_erf_and_logsumexp_on_the_host_match_jax():
    """Ops without a device kernel run on Systole's interpreter (is-finite from logsumexp, erf
    from jax.scipy.special.erf), beside the device steps of the dot and of the softmax of its
    erf-form GELU (one VECTOR gelu_erf, docs/COMPILER.md; here on the host, since logsumexp's
    is-finite reads it at full precision): every output within the f32 tolerance of JAX."""
    def f(x, w):
        y = jax.nn.gelu(x @ w, approximate=False)
        return jax.nn.softmax(y, axis=-1), jax.nn.logsumexp(y, axis=-1), jax.scipy.special.erf(y)

    rng = np.random.default_rng(7)
    x, w = rng.standard_normal((4, 16)).astype(np.float32), rng.standard_normal((16, 16)).astype(np.float32)
    fast = systole.jax.jit(f)
    for out, ref in zip(fast(x, w), jax.jit(f)(x, w)):
        assert relative_error(out, ref) <= F32_TOLERANCE
    # The dot, the softmax as one fused step, and logsumexp's subtract, exp and sum: 5 steps.
    assert fast.program.device_steps == 5
    assert any(s["kernel"].startswith("softmax") for s in fast.placement if s["kind"] == "device")
    host = {s["opcode"] for s in fast.placement if s["kind"] == "host"}
    assert {"erf", "is-finite", "exponential"} <= host


def test_unsupported_op_names_the_python_line():
    def f(x):
        return jax.lax.population_count(x) * 2  # popcnt: not in the front end

    with pytest.raises(systole.HloError, match=r"unsupported op 'popcnt' .*\(traced at .*test_jax.py:\d+:\d+ \(.*f\)\)"):
        systole.jax.jit(f)(np.ones((4, 3), np.int32))


def test_embedding_lookup_and_its_gradient_run_on_the_host():
    # gather (jnp.take) and scatter-add (its gradient): host steps, the dot on the device.
    def f(table, ids, w):
        rows = jnp.take(table, ids, axis=0)
        grad = jax.grad(lambda t: jnp.sum(jnp.take(t, ids, axis=0) @ w))(table)
        return rows @ w, grad

    rng = np.random.default_rng(7)
    table = rng.standard_normal((10, 16)).astype(np.float32)
    w = rng.standard_normal((16, 16)).astype(np.float32)
    ids = np.array([3, 0, 9, 3], np.int32)
    fast = systole.jax.jit(f)
    out, grad = fast(table, ids, w)
    ref_out, ref_grad = jax.jit(f)(table, ids, w)
    assert relative_error(out, ref_out) <= F32_TOLERANCE
    assert relative_error(grad, ref_grad) <= F32_TOLERANCE
    host = {s["opcode"] for s in fast.placement if s["kind"] == "host"}
    assert {"gather", "scatter"} <= host


def test_f8_inputs_and_outputs_are_jaxs():
    # ml_dtypes' float8 arrays in and out; the f8 arithmetic runs on the host, exactly as JAX
    # rounds it (tests/hlo/f8_test.cpp checks the rounding against ml_dtypes).
    import ml_dtypes

    def f(x8, w):
        y = x8.astype(jnp.float32) @ w
        return (x8.astype(jnp.float32) * 3).astype(jnp.float8_e5m2), y

    rng = np.random.default_rng(8)
    x8 = rng.standard_normal((4, 16)).astype(ml_dtypes.float8_e4m3fn)
    w = rng.standard_normal((16, 16)).astype(np.float32)
    fast = systole.jax.jit(f)
    scaled, y = fast(x8, w)
    ref_scaled, ref_y = jax.jit(f)(x8, w)
    assert scaled.dtype == ref_scaled.dtype == np.dtype(ml_dtypes.float8_e5m2)
    np.testing.assert_array_equal(scaled.astype(np.float32), np.asarray(ref_scaled).astype(np.float32))
    assert relative_error(y, ref_y) <= F32_TOLERANCE
    assert fast.program.device_steps == 1  # the dot


def test_output_dtypes_are_jaxs():
    def f(x):
        return x > 0, jnp.argmax(x, axis=-1), x.astype(jnp.int16), x.astype(jnp.uint8), x.astype(jnp.bfloat16)

    x = np.linspace(-3, 3, 24, dtype=np.float32).reshape(4, 6)
    ours, theirs = systole.jax.jit(f)(x), jax.jit(f)(x)
    for a, b in zip(ours, theirs):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, np.asarray(b))


def test_norms_compute_nothing_on_the_host():
    """A layer norm with scale and shift is one fused vector-unit step (its intermediates stay in the
    unified buffer, docs/CODEGEN.md "Fused layer norm"); an RMS norm runs on the vector unit step by
    step; neither computes on the host, and both match JAX on bf16 inputs."""
    def layer_norm(x, g, b):
        m = jnp.mean(x, axis=-1, keepdims=True)
        v = jnp.mean((x - m) ** 2, axis=-1, keepdims=True)
        return (x - m) * jax.lax.rsqrt(v + 1e-5) * g + b

    def rms_norm(x, w):
        return x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-6) * w

    rng = np.random.default_rng(11)
    x = (rng.standard_normal((24, 80)) * 3 + 1).astype(jnp.bfloat16)
    g, b = rng.uniform(0.5, 1.5, 80).astype(jnp.bfloat16), rng.uniform(-1, 1, 80).astype(jnp.bfloat16)
    for f, args in ((layer_norm, (x, g, b)), (rms_norm, (x, g))):
        fast = systole.jax.jit(f)
        y = fast(*args)
        expected = np.asarray(jax.jit(f)(*args)).astype(np.float32)
        assert relative_error(np.asarray(y).astype(np.float32), expected) <= BF16_TOLERANCE, f.__name__
        assert not [s for s in fast.placement if s["kind"] == "host" and s["work"] == "compute"], f.__name__
        kernels = [s["kernel"] for s in fast.placement if s["kind"] == "device"]
        if f is layer_norm:
            assert kernels == ["layer norm 24x80 ·γ +β"], kernels
        else:
            assert len(kernels) >= 3 and not any(k.startswith("layer norm") for k in kernels), kernels


def test_a_strided_convolutions_gradients_run_every_convolution_on_the_mxu():
    """jax.grad of a stride-2 convolution: the input gradient is a convolution with lhs_dilate=2x2,
    which the compiler runs on the MXU after a host pad that inserts the zeros between the
    pixels (docs/COMPILER.md, "Strided convolutions' input gradients"); the kernel gradient is a
    convolution with window dilation. Every convolution is a device step and both gradients
    match JAX's."""
    dn = ("NHWC", "HWIO", "NHWC")

    def loss(x, w):
        y = jax.lax.conv_general_dilated(x, w, (2, 2), "SAME", dimension_numbers=dn)
        return jnp.sum(jnp.tanh(y) * y)

    grads = jax.grad(loss, argnums=(0, 1))
    rng = np.random.default_rng(12)
    for shape in ((2, 8, 8, 4), (1, 7, 9, 3)):  # even and odd sizes: different SAME paddings
        x = rng.standard_normal(shape).astype(np.float32)
        w = (rng.standard_normal((3, 3, shape[3], 8)) / np.sqrt(9 * shape[3])).astype(np.float32)
        fast = systole.jax.jit(grads)
        dx, dw = fast(x, w)
        want_dx, want_dw = (np.asarray(g) for g in jax.jit(grads)(x, w))
        assert relative_error(dx, want_dx) <= F32_TOLERANCE, shape
        assert relative_error(dw, want_dw) <= F32_TOLERANCE, shape
        convolutions = [s for s in fast.placement if s["opcode"] == "convolution"]
        assert len(convolutions) == 3 and all(s["kind"] == "device" for s in convolutions), fast.report()
        pads = [s for s in fast.placement if s["opcode"] == "pad"]
        assert len(pads) == 1 and pads[0]["kind"] == "host" and pads[0]["work"] == "data movement"
