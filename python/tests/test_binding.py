"""The binding: devices, device memory, compile, run, model files, errors."""
import subprocess
import sys
import threading

import numpy as np
import pytest

import systole
from conftest import SHARED_DIR, SOURCE_DIR, relative_error

SMALL_CNN = SOURCE_DIR / "examples/hlo/small_cnn_f32.hlo"
# bf16 operands with f32 accumulation against the interpreter in double: docs/COMPILER.md.
BF16_TOLERANCE = 2.0**-6


def test_device_info(ref):
    info = ref.info
    assert info["uri"] == "ref" and info["config"] == "small"
    assert (info["rows"], info["cols"], info["dtype"]) == (16, 16, "bf16")
    assert info["peak_macs_per_cycle"] == 256
    assert "small" in systole.configs() and systole.config_info("small-int8")["dtype"] == "int8"
    assert repr(ref) == "<systole.Device 'ref' config='small'>"


@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.int32, np.uint16])
def test_memory_round_trip(ref, dtype):
    rng = np.random.default_rng(7)
    data = (rng.standard_normal((37, 5)) * 50).astype(dtype)
    buffer = ref.upload(data)
    assert buffer.size == data.nbytes and buffer.address % 64 == 0
    np.testing.assert_array_equal(buffer.read(dtype, data.shape), data)
    # Part of it, at an offset: the rest is untouched.
    patch = np.arange(5, dtype=dtype)
    buffer.write(patch, offset=data.itemsize * 5)
    expected = data.copy()
    expected[1] = patch
    np.testing.assert_array_equal(buffer.read(dtype, data.shape), expected)
    np.testing.assert_array_equal(buffer.read(dtype, offset=data.itemsize * 5)[:5], patch)


def test_memory_errors(ref):
    buffer = ref.allocate(64)
    with pytest.raises(systole.DeviceError, match="ref"):
        buffer.write(np.zeros(65, np.uint8))
    with pytest.raises(systole.DeviceError):
        buffer.read(np.uint8, (8,), offset=60)
    with pytest.raises(ValueError, match="C-contiguous"):
        buffer.write(np.zeros((8, 8), np.uint8)[:, ::2])
    with pytest.raises(ValueError, match="past the buffer's end"):
        buffer.read(np.uint8, offset=65)
    # Distinct buffers do not overlap.
    other = ref.allocate(64)
    assert other.address >= buffer.address + 64 or other.address + 64 <= buffer.address


def test_compile_small_cnn_placement():
    program = systole.compile(SMALL_CNN, config="small")
    assert program.config == "small" and program.source_name == "small_cnn_f32.hlo"
    kinds = [s["kind"] for s in program.placement]
    # README: two convolutions with bias and ReLU fused, the max pool, the dense layer on the
    # device; one host reshape.
    assert program.device_steps == 4 and kinds.count("device") == 4
    assert program.host_steps >= 1
    device = [s for s in program.placement if s["kind"] == "device"]
    assert [s["opcode"] for s in device].count("convolution") + sum("conv" in s["kernel"] for s in device) >= 2
    assert all(s["cycles"] > 0 for s in device)
    assert program.cycles == sum(s["cycles"] for s in device)
    assert 0 < program.estimate["mxu_utilization"] <= 1
    assert "device" in program.placement_table() and "host" in program.placement_table()
    # Text and path compile to the same program.
    again = systole.compile(SMALL_CNN.read_text(), config="small")
    assert again.cycles == program.cycles and again.source_name == "<hlo text>"


def test_a_loops_body_is_placed_under_it():
    # Eight SGD steps of the MLP in one lax.fori_loop: the body's five dots are device steps,
    # listed after the while at depth 1 with the region they belong to (docs/COMPILER.md).
    program = systole.compile(SOURCE_DIR / "examples/training/mlp_sgd_loop.hlo", config="small")
    control = [s for s in program.placement if s["kind"] == "control"]
    assert len(control) == 1 and control[0]["opcode"] == "while"
    assert "not known at compile time" in control[0]["reason"]
    device = [s for s in program.placement if s["kind"] == "device"]
    assert program.device_steps == 5 and len(device) == 5
    assert all(s["depth"] == 1 and s["region"].startswith("body ") for s in device)
    assert "  control while" in program.placement_table()


def test_run_small_cnn_on_ref_matches_interpreter(ref):
    program = systole.compile(str(SMALL_CNN), config="small")
    inputs = systole.random_inputs(program, seed=3)
    assert [x.shape for x in inputs] == program.input_shapes
    result = ref.run(program, inputs)
    expected = systole.interpret(program, inputs)
    assert len(result.outputs) == len(expected) == len(program.outputs)
    for out, exp, desc in zip(result.outputs, expected, program.outputs):
        assert out.shape == tuple(desc["shape"])
        assert relative_error(out, exp) <= BF16_TOLERANCE
    # On the golden model the counted cycles are the static estimate.
    assert result.cycles == program.cycles
    assert result.stats["device_steps"] == 4 and result.stats["macs"] > 0
    counters = ref.counters()
    assert {"CYCLES", "MXU_BUSY", "MACS"} <= set(counters)


def test_run_with_jobs_gives_the_same_outputs_and_stats(ref):
    program = systole.compile(str(SMALL_CNN), config="small")
    inputs = systole.random_inputs(program, seed=3)
    one = ref.run(program, inputs)
    side_by_side = ref.run(program, inputs, jobs=3)
    for a, b in zip(one.outputs, side_by_side.outputs):
        assert a.dtype == b.dtype and np.array_equal(a, b)
    # The golden model's estimate has no history: the same cycles however the steps are spread.
    for key in ("cycles", "macs", "mxu_busy", "device_steps", "host_steps"):
        assert side_by_side.stats[key] == one.stats[key], key
    with pytest.raises(ValueError, match="jobs must be at least 1"):
        ref.run(program, inputs, jobs=0)


def test_corpus_mlp_on_ref(ref):
    path = SHARED_DIR / "corpus/hlo/01_mlp_fc_relu_tf.hlo"
    if not path.exists():
        pytest.skip(f"{path} is not here (the corpus lives in ../shared)")
    program = systole.compile(path)
    inputs = systole.random_inputs(program, seed=9)
    result = ref.run(program, inputs)
    for out, exp in zip(result.outputs, systole.interpret(program, inputs)):
        assert relative_error(out, exp) <= BF16_TOLERANCE


def test_model_file_round_trip(ref, tmp_path):
    program = systole.compile(SMALL_CNN)
    program.save(tmp_path / "cnn.sbin")
    loaded = systole.load(tmp_path / "cnn.sbin")
    assert loaded.cycles == program.cycles and loaded.config == "small"
    inputs = systole.random_inputs(program, seed=1)
    for a, b in zip(ref.run(program, inputs).outputs, ref.run(loaded, inputs).outputs):
        np.testing.assert_array_equal(a, b)


TWO_MODULES = """HloModule twice
ENTRY e { p = f32[4] parameter(0)
  ROOT t = f32[4] add(p, p) }
// -----
HloModule negated
ENTRY e { p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p) }
"""


def test_compile_picks_one_module_of_several(ref):
    x = np.arange(4, dtype=np.float32)
    for selector, expected in ((0, 2 * x), ("twice", 2 * x), (1, -x), ("negated", -x)):
        program = systole.compile(TWO_MODULES, module=selector)
        np.testing.assert_array_equal(ref.run(program, [x]).outputs[0], expected)
    with pytest.raises(systole.HloError, match=r"twice.*negated"):
        systole.compile(TWO_MODULES, module="thrice")
    # Without module=, a file of several modules is refused rather than one being guessed.
    with pytest.raises(systole.HloError):
        systole.compile(TWO_MODULES)


BAD_HLO = "HloModule bad\n\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT n = f32[2] negat(p)\n}\n"


def test_errors_are_exceptions_with_the_message(ref):
    with pytest.raises(systole.HloError, match=r"<hlo text>:5:19: unsupported op 'negat'"):
        systole.compile(BAD_HLO)
    with pytest.raises(systole.HloError, match=r"bad.hlo:5:19"):
        systole.compile(BAD_HLO, name="bad.hlo")
    with pytest.raises(FileNotFoundError):
        systole.compile("no/such/file.hlo")
    with pytest.raises(systole.ConfigError):
        systole.compile(SMALL_CNN, config="no-such-config")
    with pytest.raises(systole.DeviceError):
        systole.Device("nosuch://here", config="small")
    assert issubclass(systole.RunError, systole.DeviceError) and issubclass(systole.Error, RuntimeError)

    program = systole.compile(SMALL_CNN)
    inputs = systole.random_inputs(program, seed=1)
    with pytest.raises(ValueError, match="takes 7 input"):
        ref.run(program, inputs[:-1])
    with pytest.raises(systole.HloError, match="has shape"):
        ref.run(program, [np.zeros((1, 2), np.float32)] + inputs[1:])
    with pytest.raises(TypeError, match="cannot take an array of dtype int32"):
        ref.run(program, [inputs[0].astype(np.int32)] + inputs[1:])
    int8_device = systole.Device("ref", config="small-int8")
    with pytest.raises(ValueError, match="compiled for configuration 'small'"):
        int8_device.run(program, inputs)
    # A float model on an int8 MXU is a compile error that says why.
    with pytest.raises(systole.Error, match="int8"):
        systole.compile(SMALL_CNN, config="small-int8")


def test_threads_share_a_device_safely(ref):
    program = systole.compile(SMALL_CNN)
    inputs = systole.random_inputs(program, seed=2)
    expected = ref.run(program, inputs).outputs[0]
    results, errors = [], []

    def work():
        try:
            results.append(ref.run(program, inputs).outputs[0])
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for r in results:
        np.testing.assert_array_equal(r, expected)


def test_python_m_systole(tmp_path):
    out = subprocess.run([sys.executable, "-m", "systole", "compile", str(SMALL_CNN), "-o", str(tmp_path / "m.sbin")],
                         capture_output=True, text=True, check=True).stdout
    assert "4 device step(s)" in out and (tmp_path / "m.sbin").exists()
    out = subprocess.run([sys.executable, "-m", "systole", "run", str(tmp_path / "m.sbin"), "--random-inputs", "1"],
                         capture_output=True, text=True, check=True).stdout
    assert "device cycles" in out
    bad = tmp_path / "bad.hlo"
    bad.write_text(BAD_HLO)
    run = subprocess.run([sys.executable, "-m", "systole", "compile", str(bad)], capture_output=True, text=True)
    assert run.returncode == 1 and "bad.hlo:5:19" in run.stderr
