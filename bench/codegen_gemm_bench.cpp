// MXU utilisation of the code generator's schedules: GEMMs and ResNet-50-like convolutions are
// compiled with the kernel library, run on the golden model, and reported with the static
// estimate (the builder's replay of the timing model) next to the model's own counters.
//
//   build/bench/codegen_gemm_bench --benchmark_counters_tabular=true
//
// Counters: static_cycles (estimate), model_cycles (PERF_CYCLES), mxu_util (PERF_MXU_BUSY /
// PERF_CYCLES: the share of cycles the array streams rows, memory stalls included).
#include <benchmark/benchmark.h>

#include <cstring>
#include <functional>
#include <vector>

#include "arch/config/config.hpp"
#include "sim/model/golden_model.hpp"
#include "toolchain/codegen/kernels.hpp"

namespace systole::codegen {
namespace {

// Builds a program with `emit`, runs it once per iteration on a fresh model (inputs left as
// zeros: timing does not depend on values), and reports the counters.
void RunAndReport(benchmark::State& state, const char* config_name,
                  const std::function<void(ProgramBuilder&)>& emit) {
  const Config config = LoadConfig(config_name);
  ProgramBuilder builder(config);
  emit(builder);
  const image::Program program = builder.Finish();
  std::vector<std::uint8_t> text;
  for (const isa::Word& word : program.words) text.insert(text.end(), word.begin(), word.end());
  std::uint64_t cycles = 0, busy = 0, macs = 0;
  for (auto _ : state) {
    model::GoldenModel device(config);
    for (const auto& segment : program.data) device.WriteMemory(segment.address, segment.bytes);
    device.WriteMemory(program.text_address, text);
    const auto result =
        device.Execute(program.text_address, static_cast<std::uint32_t>(program.words.size()));
    if (!result.Ok()) state.SkipWithError(result.message.c_str());
    cycles = device.Counter("CYCLES");
    busy = device.Counter("MXU_BUSY");
    macs = device.Counter("MACS");
  }
  const CycleEstimate& estimate = builder.Estimates().back();
  state.counters["static_cycles"] = static_cast<double>(estimate.cycles);
  state.counters["static_util"] = estimate.MxuUtilization();
  state.counters["model_cycles"] = static_cast<double>(cycles);
  state.counters["mxu_util"] = cycles == 0 ? 0.0 : double(busy) / double(cycles);
  state.counters["instructions"] = static_cast<double>(program.words.size());
  state.counters["MACs/s"] = benchmark::Counter(static_cast<double>(macs),
                                                benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Gemm(benchmark::State& state, const char* config_name) {
  const auto n = static_cast<std::uint64_t>(state.range(0));
  RunAndReport(state, config_name, [&](ProgramBuilder& b) {
    const Tensor a = b.AddInput("A", b.ElementType(), {n, n});
    const Tensor w = b.AddInput("B", b.ElementType(), {n, n});
    const Tensor bias = b.AddInput("bias", b.AccumulatorType(), {n});
    const Tensor out = b.AddOutput("out", b.ElementType(), {n, n});
    Gemm(b, a, w, bias, out,
         b.IsBf16() ? OutputTransform::Float(isa::ActFunc::kRelu)
                    : OutputTransform::Quantized(1, 8, 0, isa::ActFunc::kRelu));
  });
}
BENCHMARK_CAPTURE(BM_Gemm, small, "small")->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Gemm, small_int8, "small-int8")->Arg(256)->Unit(benchmark::kMillisecond);

// ResNet-50 layers at batch 1: (H=W, Cin, Cout, kernel, stride).
void BM_Conv(benchmark::State& state, const char* config_name) {
  const auto hw = static_cast<std::uint64_t>(state.range(0));
  const auto cin = static_cast<std::uint64_t>(state.range(1));
  const auto cout = static_cast<std::uint64_t>(state.range(2));
  const auto k = static_cast<std::uint32_t>(state.range(3));
  const auto stride = static_cast<std::uint32_t>(state.range(4));
  RunAndReport(state, config_name, [&](ProgramBuilder& b) {
    ConvParams p;
    p.stride_h = p.stride_w = stride;
    p.pad_top = p.pad_bottom = p.pad_left = p.pad_right = k / 2;
    const std::uint64_t out_hw = (hw + 2 * (k / 2) - k) / stride + 1;
    const Tensor in = b.AddInput("in", b.ElementType(), {1, hw, hw, cin});
    const Tensor w = b.AddInput("w", b.ElementType(), {k, k, cin, cout});
    const Tensor bias = b.AddInput("bias", b.AccumulatorType(), {cout});
    const Tensor out = b.AddOutput("out", b.ElementType(), {1, out_hw, out_hw, cout});
    Conv2D(b, in, w, bias, out, p, OutputTransform::Float(isa::ActFunc::kRelu));
  });
}
BENCHMARK_CAPTURE(BM_Conv, small, "small")
    ->Args({56, 64, 64, 3, 1})     // conv2_x 3x3
    ->Args({56, 64, 256, 1, 1})    // conv2_x 1x1 expand
    ->Args({28, 128, 128, 3, 1})   // conv3_x 3x3
    ->Args({7, 512, 512, 3, 1})    // conv5_x 3x3
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace systole::codegen
BENCHMARK_MAIN();
