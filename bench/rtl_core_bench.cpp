// The Verilated whole core on GEMMs from the code generator: RTL cycles and MXU utilisation
// beside SCALE-Sim's weight-stationary closed form, for a few GEMM shapes and for every layer of
// ResNet-50 (SCALE-Sim's topology file, each convolution as its GEMM), plus the simulation
// speed of every built core. Every run is checked against the golden model (output bytes and
// MACs), so a figure never comes from a wrong result. Prints Markdown tables.
//
//   build/bench/rtl_core_bench                       # shapes + ResNet-50 on small-int8, speed
//   build/bench/rtl_core_bench --config small --layers 8
//   build/bench/rtl_core_bench --config small --onchip   # operands on chip: steady-state util
//   build/bench/rtl_core_bench --speed-only           # simulation speed, bare array beside
//   build/bench/rtl_core_bench --speed-only --speed-beside   # ... and the bare array sharing the caches with the core
//
// MXU util = useful MACs (M*K*N) / (R*C*RTL cycles); RTL cycles = PERF_CYCLES of the launch;
// model cycles = the golden model's analytic estimate (PERF_CYCLES).
// SCALE-Sim (corpus/scalesim/README): a weight-stationary fold takes 2R + C + M - 2 cycles
// (fill R weight rows, stream M rows skewed over R and C), folds = ceil(K/R) * ceil(N/C), and
// folds do not overlap. The RTL double-buffers weights and streams the next fold's rows behind
// the current one's, so it should need fewer cycles. Convolutions follow SCALE-Sim's
// convention: no padding, output = (input - filter) / stride + 1, M = output pixels,
// K = filter_h * filter_w * channels, N = filters.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <ctime>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "arch/regs/regmap.hpp"
#include "bench/cpu_time.hpp"
#include "bench/rtl_bare_array.hpp"
#include "bench/rtl_core_bench_onchip.hpp"
#include "bench/rtl_gemm_workload.hpp"
#include "sim/model/golden_model.hpp"
#include "sim/rtl/rtl_device.hpp"
#include "toolchain/asm/assembler.hpp"

namespace systole::rtl::bench {
namespace {

// CPU time of this (single-threaded) process: simulation speed that does not depend on what
// else the machine is running.
struct Shape {
  std::string name;
  std::uint64_t m, k, n;
};

// The bare core behind memory that answers after 8 cycles and never refuses a request.
RtlDeviceOptions BenchOptions() {
  RtlDeviceOptions options;
  options.memory = MemoryBackend::kIdeal;
  options.memory_latency = 8;
  options.memory_ready_percent = 100;
  return options;
}

std::uint64_t ScaleSimCycles(const Config& config, const Shape& s) {
  const std::uint64_t r = config.rows, c = config.cols;
  const std::uint64_t folds = ((s.k + r - 1) / r) * ((s.n + c - 1) / c);
  return folds * (2 * r + c + s.m - 2);
}

// One GEMM on the golden model and on `rtl` (reused: counters are read as differences).
struct Result {
  std::uint64_t rtl_cycles = 0, model_cycles = 0, macs = 0;
  std::uint64_t busy = 0, stall_token = 0, stall_memory = 0;  // RTL counters
  double seconds = 0;  // CPU time of the RTL simulation of the launch
};
Result RunGemm(const Config& config, RtlDevice& rtl, const Shape& shape) {
  const GemmWorkload work = MakeGemm(config, shape.m, shape.k, shape.n, 1);
  model::GoldenModel golden(config);
  for (const auto* segments : {&work.program.data, &work.inputs}) {
    for (const image::DataSegment& segment : *segments) {
      golden.WriteMemory(segment.address, segment.bytes);
      rtl.WriteMemory(segment.address, segment.bytes);
    }
  }
  golden.WriteMemory(work.program.text_address, work.text);
  rtl.WriteMemory(work.program.text_address, work.text);
  const auto count = static_cast<std::uint32_t>(work.program.words.size());
  const model::LaunchResult launched = golden.Execute(work.program.text_address, count);
  if (!launched.Ok()) throw std::runtime_error(shape.name + ": golden model: " + launched.message);

  const std::uint64_t cycles0 = Counter(rtl, "CYCLES"), macs0 = Counter(rtl, "MACS");
  const std::uint64_t busy0 = Counter(rtl, "MXU_BUSY"), token0 = Counter(rtl, "STALL_TOKEN");
  const std::uint64_t memory0 = Counter(rtl, "STALL_MEMORY");
  const auto offset = [](const char* name) { return regs::FindRegister(name)->offset; };
  rtl.WriteRegister(offset("CMD_PC_LO"), static_cast<std::uint32_t>(work.program.text_address));
  rtl.WriteRegister(offset("CMD_PC_HI"), static_cast<std::uint32_t>(work.program.text_address >> 32));
  rtl.WriteRegister(offset("CMD_COUNT"), count);
  const double start = CpuSeconds();
  rtl.WriteRegister(offset("DOORBELL"), 1);
  if (!rtl.RunUntilIdle(4'000'000'000)) throw std::runtime_error(shape.name + ": RTL did not finish");
  Result result;
  result.seconds = CpuSeconds() - start;
  if (rtl.ReadRegister(offset("ERROR_CODE")) != 0) {
    throw std::runtime_error(shape.name + ": the RTL faulted where the golden model did not");
  }
  result.rtl_cycles = Counter(rtl, "CYCLES") - cycles0;
  const std::uint64_t counted = Counter(rtl, "MACS") - macs0;  // whole array columns
  result.macs = work.macs;                                       // useful: M * K * N
  result.busy = Counter(rtl, "MXU_BUSY") - busy0;
  result.stall_token = Counter(rtl, "STALL_TOKEN") - token0;
  result.stall_memory = Counter(rtl, "STALL_MEMORY") - memory0;
  if (std::getenv("SYSTOLE_BENCH_COUNTERS")) {
    for (const auto* name : {"CYCLES", "INSNS", "MXU_BUSY", "MACS", "STALL_TOKEN", "STALL_WFIFO",
                             "STALL_MEMORY", "STALL_DISPATCH"}) {
      fmt::print(stderr, "{}: {} {} (model {})\n", shape.name, name, Counter(rtl, name),
                 golden.Counter(name));
    }
  }
  result.model_cycles = golden.Counter("CYCLES");
  const image::TensorDesc& out = work.program.outputs.at(0);
  std::vector<std::uint8_t> want(out.Bytes()), got(out.Bytes());
  golden.ReadMemory(out.address, want);
  rtl.ReadMemory(out.address, got);
  if (want != got || counted != golden.Counter("MACS")) {
    throw std::runtime_error(shape.name + ": the RTL result differs from the golden model");
  }
  return result;
}

// One unit's throughput: `body` repeated `times` times (assembly for `config`), on a fresh RTL
// core and the golden model; cycles per repetition of each.
void UnitRow(const Config& config, const std::string& what, const std::string& prologue,
             const std::string& body, int times, std::uint64_t work, const char* work_unit) {
  std::string source = ".config " + config.name + "\n.text at=0x100000\n" + prologue;
  for (int i = 0; i < times; ++i) source += body;
  source += "halt\n";
  const image::Program program = assembly::Assemble(source, what);
  std::vector<std::uint8_t> text;
  for (const isa::Word& word : program.words) text.insert(text.end(), word.begin(), word.end());
  model::GoldenModel golden(config);
  golden.WriteMemory(program.text_address, text);
  const model::LaunchResult launched =
      golden.Execute(program.text_address, static_cast<std::uint32_t>(program.words.size()));
  if (!launched.Ok()) throw std::runtime_error(what + ": golden model: " + launched.message);
  auto rtl = MakeRtlDevice(config, BenchOptions());
  rtl->WriteMemory(program.text_address, text);
  const auto offset = [](const char* name) { return regs::FindRegister(name)->offset; };
  rtl->WriteRegister(offset("CMD_PC_LO"), static_cast<std::uint32_t>(program.text_address));
  rtl->WriteRegister(offset("CMD_COUNT"), static_cast<std::uint32_t>(program.words.size()));
  rtl->WriteRegister(offset("DOORBELL"), 1);
  if (!rtl->RunUntilIdle(100'000'000)) throw std::runtime_error(what + ": RTL did not finish");
  const double rtl_per = double(Counter(*rtl, "CYCLES")) / times;
  const double model_per = double(golden.Counter("CYCLES")) / times;
  fmt::print("| {} | {:.1f} | {:.1f} | {:.2f} | {:.2f} |\n", what, rtl_per, model_per,
             rtl_per / double(work), model_per / double(work));
  (void)work_unit;
  std::fflush(stdout);
}

void UnitTable(const Config& config) {
  fmt::print("\n### Unit throughput on {} (cycles per instruction; per row / per tile)\n\n"
             "| program | RTL | model | RTL per unit of work | model per unit of work |\n"
             "|---|---:|---:|---:|---:|\n", config.name);
  const std::string row = std::to_string(config.UbRowBytes());
  UnitRow(config, "load 128 contiguous rows", "",
          "load mem=ub, dram=0x10000, stride=" + row + ", row=0, rows=128, elems=" +
              std::to_string(config.UbRowElems()) + "\n", 16, 128, "row");
  UnitRow(config, "load 32 contiguous rows", "",
          "load mem=ub, dram=0x10000, stride=" + row + ", row=0, rows=32, elems=" +
              std::to_string(config.UbRowElems()) + "\n", 16, 32, "row");
  UnitRow(config, "load 128 rows, stride 1024", "",
          "load mem=ub, dram=0x10000, stride=1024, row=0, rows=128, elems=" +
              std::to_string(config.UbRowElems()) + "\n", 16, 128, "row");
  UnitRow(config, "store 128 rows, stride 64", "",
          "store mem=ub, dram=0x10000, stride=64, row=0, rows=128, elems=" +
              std::to_string(config.UbRowElems()) + "\n", 16, 128, "row");
  UnitRow(config, "activate 128 rows", "",
          "activate acc=0, ub=0, rows=128\n", 16, 128, "row");
  UnitRow(config, "load_weights (FIFO drained by matmul rows=1 pop)", "",
          "load_weights dram=0x10000, stride=64, rows=" + std::to_string(config.rows) +
              ", cols=" + std::to_string(config.cols) + "\nmatmul ub=0, acc=0, rows=1, k=" +
              std::to_string(config.rows) + ", pop\n", 32, 1, "tile");
  UnitRow(config, "matmul 128 rows, no pop", "load_weights dram=0x10000, stride=64, rows=" +
              std::to_string(config.rows) + ", cols=" + std::to_string(config.cols) +
              "\nmatmul ub=0, acc=0, rows=1, k=" + std::to_string(config.rows) + ", pop\n",
          "matmul ub=0, acc=0, rows=128, k=" + std::to_string(config.rows) + "\n", 32, 128, "row");
  UnitRow(config, "matmul 128 rows, pop (weights queued)", "",
          "load_weights dram=0x10000, stride=64, rows=" + std::to_string(config.rows) +
              ", cols=" + std::to_string(config.cols) + "\nmatmul ub=0, acc=0, rows=128, k=" +
              std::to_string(config.rows) + ", pop\n", 32, 128, "row");
}

// SCALE-Sim topology CSV: "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter
// Width, Channels, Num Filter, Strides," then one convolution per line.
std::vector<Shape> ReadTopology(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open topology " + path);
  std::vector<Shape> shapes;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    std::vector<std::string> fields;
    std::stringstream stream(line);
    for (std::string field; std::getline(stream, field, ',');) {
      const auto first = field.find_first_not_of(" \t\r"), last = field.find_last_not_of(" \t\r");
      if (first != std::string::npos) fields.push_back(field.substr(first, last - first + 1));
    }
    if (fields.empty() || number == 1) continue;  // the header, blank lines
    if (fields.size() != 8) {
      throw std::runtime_error(fmt::format("{}:{}: expected 8 fields (name, ifmap h, w, filter h, "
                                           "w, channels, filters, stride), got {}",
                                           path, number, fields.size()));
    }
    std::uint64_t v[7];
    for (int i = 0; i < 7; ++i) {
      std::size_t used = 0;
      v[i] = std::stoull(fields[static_cast<std::size_t>(i) + 1], &used);
      if (used != fields[static_cast<std::size_t>(i) + 1].size() || v[i] == 0) {
        throw std::runtime_error(fmt::format("{}:{}: field {} is not a positive integer: '{}'",
                                             path, number, i + 2, fields[static_cast<std::size_t>(i) + 1]));
      }
    }
    const auto [ih, iw, fh, fw, ch, nf, stride] = std::tuple(v[0], v[1], v[2], v[3], v[4], v[5], v[6]);
    if (fh > ih || fw > iw) throw std::runtime_error(fmt::format("{}:{}: filter larger than input", path, number));
    const std::uint64_t oh = (ih - fh) / stride + 1, ow = (iw - fw) / stride + 1;
    shapes.push_back({fields[0], oh * ow, fh * fw * ch, nf});
  }
  return shapes;
}

void GemmTable(const Config& config, const std::vector<Shape>& shapes, const std::string& title) {
  auto rtl = MakeRtlDevice(config, BenchOptions());
  const double pes = double(config.rows) * config.cols;
  fmt::print("\n### {} on {} ({}x{} {})\n\n", title, config.name, config.rows, config.cols,
             DTypeName(config.dtype));
  fmt::print("| GEMM | M | K | N | RTL cycles | MXU util | SCALE-Sim WS cycles | RTL / SCALE-Sim | "
             "model cycles | CPU s |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  std::uint64_t rtl_total = 0, scalesim_total = 0, model_total = 0, macs_total = 0;
  double seconds = 0;
  for (const Shape& shape : shapes) {
    const Result r = RunGemm(config, *rtl, shape);
    const std::uint64_t formula = ScaleSimCycles(config, shape);
    fmt::print("| {} | {} | {} | {} | {} | {:.1f}% | {} | {:.3f} | {} | {:.1f} |\n", shape.name,
               shape.m, shape.k, shape.n, r.rtl_cycles, 100.0 * double(r.macs) / (pes * double(r.rtl_cycles)),
               formula, double(r.rtl_cycles) / double(formula), r.model_cycles, r.seconds);
    std::fflush(stdout);
    rtl_total += r.rtl_cycles, scalesim_total += formula, model_total += r.model_cycles;
    macs_total += r.macs, seconds += r.seconds;
  }
  fmt::print("| **total** | | | | {} | {:.1f}% | {} | {:.3f} | {} | {:.1f} |\n", rtl_total,
             100.0 * double(macs_total) / (pes * double(rtl_total)), scalesim_total,
             double(rtl_total) / double(scalesim_total), model_total, seconds);
}

// Simulation speed of each built core on one GEMM, against two baselines in the same run: the
// same core clocked with nothing to do (the floor cost of evaluating the model), and the bare
// systolic array of the same element type (rtl_bare_array.hpp; the ceiling). "vs bare array"
// is the core's PE-updates per second over the bare array's. The GEMM is launched `repeats`
// times on the same core (each launch checked against the golden model) and the two baselines
// run as many cycles as all launches together: one launch of `small-int8` is 0.05 CPU-s, too
// short for a figure that the machine's noise does not move.
//
// `beside` adds the bare array clocked again with one idle cycle of the core after each of its
// cycles; its time is the pair's less the idle core's. The array's code and data then share the
// caches with the rest of the core's, as its copy inside the core does: what the array costs
// there, with nothing in its RTL or its inputs different (rtl/README.md, "Why the array costs
// more inside the core").
void SpeedTable(const Shape& shape, unsigned repeats, bool beside) {
  fmt::print("\n### Verilator simulation speed ({} GEMM M={} K={} N={}, {} launches; idle: the core "
             "clocked with no launch; bare array: the systolic array alone, busy every cycle{})\n\n"
             "| core | cycles | CPU s | cycles/s | PE-updates/s | idle cycles/s | bare array | "
             "bare array PE-updates/s | vs bare array |{}\n"
             "|---|---:|---:|---:|---:|---:|---|---:|---:|{}\n", shape.name, shape.m, shape.k, shape.n,
             repeats, beside ? "; beside: the bare array with an idle core cycle after each of its own" : "",
             beside ? " beside: bare array PE-updates/s | vs beside |" : "", beside ? "---:|---:|" : "");
  for (const std::string& name : BuiltRtlConfigs(MemoryBackend::kIdeal)) {
    if (name == "v2") continue;  // minutes per GEMM: the long test covers it
    const Config config = LoadConfig(name);
    auto rtl = MakeRtlDevice(config, BenchOptions());
    std::uint64_t cycles = 0;
    double seconds = 0;
    for (unsigned i = 0; i < repeats; ++i) {
      const Result r = RunGemm(config, *rtl, shape);
      cycles += r.rtl_cycles, seconds += r.seconds;
    }
    const double start = CpuSeconds();
    rtl->Run(cycles);
    const double idle = CpuSeconds() - start;
    const double rate = double(cycles) / seconds;
    const double pe_rate = rate * config.rows * config.cols;
    const BareArraySpeed bare = MeasureBareArray(config, cycles);
    fmt::print("| {} | {} | {:.2f} | {:.0f} | {:.3g} | {:.0f} | {} | {:.3g} | {:.3f} |", name, cycles,
               seconds, rate, pe_rate, double(cycles) / idle, bare.shape, bare.pe_updates_per_second,
               pe_rate / bare.pe_updates_per_second);
    if (beside) {
      const BareArraySpeed pair = MeasureBareArray(config, cycles, [&] { rtl->Run(1); });
      const double array_seconds = pair.seconds - idle;
      const double beside_rate = pair.pe_updates_per_second * pair.seconds / array_seconds;
      fmt::print(" {:.3g} | {:.3f} |", beside_rate, pe_rate / beside_rate);
    }
    fmt::print("\n");
    std::fflush(stdout);
  }
}

}  // namespace
}  // namespace systole::rtl::bench

int main(int argc, char** argv) {
  using namespace systole;
  CLI::App app{"Whole-core RTL benchmark: cycles, MXU utilisation vs SCALE-Sim, simulation speed"};
  std::string config_name = "small-int8";
  std::string topology = std::string(SYSTOLE_SHARED_DIR) + "/corpus/scalesim/topologies/Resnet50.csv";
  std::size_t layers = 0;
  bool skip_speed = false, skip_topology = false, units = false, onchip = false, speed_only = false;
  unsigned speed_repeats = 10;
  bool speed_beside = false;
  app.add_option("--config", config_name, "configuration for the GEMM tables")->capture_default_str();
  app.add_option("--topology", topology, "SCALE-Sim topology CSV")->capture_default_str();
  app.add_option("--layers", layers, "only the first N layers of the topology (0: all)");
  app.add_flag("--skip-speed", skip_speed, "no simulation-speed table");
  app.add_flag("--skip-topology", skip_topology, "no topology table");
  app.add_flag("--units", units, "also a table of per-unit throughput (LOAD, STORE, ...)");
  app.add_flag("--onchip", onchip, "only GEMMs with operands on chip (back-to-back folds)");
  app.add_flag("--speed-only", speed_only, "only the simulation-speed table");
  app.add_option("--speed-repeats", speed_repeats, "launches of the speed GEMM per core (CPU time summed)")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1000u));
  app.add_flag("--speed-beside", speed_beside,
               "also the bare array with an idle core cycle after each of its own (cache sharing)");
  CLI11_PARSE(app, argc, argv);
  try {
    const Config config = LoadConfig(config_name);
    if (onchip) {
      rtl::bench::OnChipTable(config, {{"long folds", 2048, 128, 16}, {"512x256x64", 512, 256, 64},
                                       {"256x512x128", 256, 512, 128},
                                       {"128x1024x256", 128, 1024, 256},
                                       {"short folds", 64, 512, 512}});
      return 0;
    }
    if (speed_only) {
      rtl::bench::SpeedTable({"speed", 512, 128, 64}, speed_repeats, speed_beside);
      return 0;
    }
    if (units) rtl::bench::UnitTable(config);
    rtl::bench::GemmTable(config, {{"square 64", 64, 64, 64}, {"square 256", 256, 256, 256},
                                   {"tall 1024x64x64", 1024, 64, 64}, {"deep 128x1024x32", 128, 1024, 32},
                                   {"wide 64x64x512", 64, 64, 512}},
                          "GEMM shapes");
    if (!skip_topology) {
      auto shapes = rtl::bench::ReadTopology(topology);
      if (layers != 0 && layers < shapes.size()) shapes.resize(layers);
      rtl::bench::GemmTable(config, shapes, "Every layer of " + topology.substr(topology.rfind('/') + 1));
    }
    if (!skip_speed) rtl::bench::SpeedTable({"speed", 512, 128, 64}, speed_repeats, speed_beside);
  } catch (const std::exception& error) {
    fmt::print(stderr, "rtl_core_bench: {}\n", error.what());
    return 1;
  }
  return 0;
}
