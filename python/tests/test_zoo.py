"""The model zoo (examples/jax/zoo.py) on `ref` against JAX on the CPU.

Tolerance per model, max |systole - jax| / max |jax| of the logits (f32 models on `small`:
bf16 operands, f32 accumulation, batch norm folded into the weights before they are rounded):
2^-6 for the shallow models and ResNet-18 (measured 3.5e-3 to 7.8e-3); 1/8 for MobileNetV2,
whose 17 inverted-residual blocks with ReLU6 clipping amplify bf16 rounding: measured 5.2e-2,
and JAX itself differs from its f32 result by 3.6e-2 when only the parameters and the input are
rounded to bf16 (docs/PYTHON.md). The predicted class must agree for every model.
"""
import sys

import jax
import numpy as np
import pytest

import systole.jax
from conftest import SOURCE_DIR, relative_error

sys.path.insert(0, str(SOURCE_DIR / "examples/jax"))
import zoo  # noqa: E402

TOLERANCE = {"mlp": 2.0**-6, "lenet5": 2.0**-6, "resnet18": 2.0**-6, "mobilenetv2": 2.0**-3,
             "bert_layer": 2.0**-6, "gpt_block": 2.0**-6}


@pytest.mark.parametrize("name", list(zoo.ZOO))
def test_zoo_model_matches_jax(name):
    init, apply = zoo.ZOO[name]
    params, inputs = init()
    fast = systole.jax.jit(apply)
    y = fast(params, *inputs)
    expected = np.asarray(jax.jit(apply)(params, *inputs))
    assert y.shape == expected.shape
    assert relative_error(y, expected) <= TOLERANCE[name]
    np.testing.assert_array_equal(np.argmax(y, axis=-1), np.argmax(expected, axis=-1))
    # Every model's dots and convolutions run on the device; the count is what ref measured.
    assert fast.program.device_steps >= 2
    assert fast.stats["cycles"] == fast.estimated_cycles > 0


# The zoo's models whose rtl run takes seconds (measured on the 2-core machine: mlp 4.8 s,
# lenet5 16.7 s, bert_layer 3.5 s, gpt_block 4.2 s); ResNet-18 and MobileNetV2 are minutes.
RTL_MODELS = ["mlp", "lenet5", "bert_layer", "gpt_block"]


@pytest.mark.parametrize("name", RTL_MODELS)
def test_zoo_model_on_rtl_equals_ref(name, rtl_available):
    if not rtl_available:
        pytest.skip("this build has no Verilated RTL (SYSTOLE_RTL=OFF)")
    init, apply = zoo.ZOO[name]
    params, inputs = init()
    on_ref = systole.jax.jit(apply, device="ref")
    on_rtl = systole.jax.jit(apply, device="rtl")
    # The same compiled model on the RTL and the golden model: bit-identical outputs and the
    # same functional counters (docs/COMPILER.md).
    np.testing.assert_array_equal(on_rtl(params, *inputs), on_ref(params, *inputs))
    assert on_rtl.stats["macs"] == on_ref.stats["macs"] > 0
    assert on_rtl.stats["cycles"] > 0
