// On-chip GEMMs: how busy back-to-back MATMUL folds keep the array when nothing else is in the
// way. Three launches per GEMM, on the Verilated core and the golden model alike:
//   1. LOAD A into the unified buffer: K split into ceil(K/R) chunks of R columns, chunk kt
//      in UB rows [kt*M, (kt+1)*M)                                          (not measured)
//   2. the folds: for every N tile nt and K tile kt, LOAD_WEIGHTS B[kt][nt] from device memory
//      and MATMUL ub=kt*M, acc=nt*M, rows=M, pop (accumulating for kt > 0). The first
//      weight_fifo_tiles LOAD_WEIGHTS come before the first MATMUL (the FIFO is preloaded),
//      then each MATMUL is followed by the LOAD_WEIGHTS of the tile weight_fifo_tiles ahead.
//      No tokens: the weight FIFO is the only flow control between WEIGHT and MXU (ISA.md).
//   3. STORE the accumulators to device memory, compared byte for byte with the golden model.
// Launch 2 runs once and then again with its folds repeated (the second pass recomputes the
// same result): the difference of the two cycle counts is what the folds cost in steady state,
// without the launch's start (first tile fill, R + C - 1 cycles of pipeline) and end.
#include "bench/rtl_core_bench_onchip.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <ctime>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "arch/regs/regmap.hpp"
#include "bench/cpu_time.hpp"
#include "sim/model/golden_model.hpp"
#include "sim/rtl/rtl_device.hpp"
#include "toolchain/asm/assembler.hpp"

namespace systole::rtl::bench {
namespace {

std::uint64_t Ceil(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

// Device-memory layout and tiling of one GEMM.
struct Layout {
  std::uint64_t m, k, n, kt, nt, e;  // e: element bytes
  std::uint64_t a = 0x100000, b = 0, out = 0;
  Layout(const Config& config, const OnChipShape& s)
      : m(s.m), k(s.k), n(s.n), kt(Ceil(s.k, config.rows)), nt(Ceil(s.n, config.cols)),
        e(ElementBytes(config.dtype)) {
    b = a + ((m * k * e + 4095) & ~std::uint64_t{4095});
    out = b + ((k * n * e + 4095) & ~std::uint64_t{4095});
  }
};

// Launch 1: A (M x K, row-major in device memory) into the unified buffer, chunk by chunk.
std::string LoadA(const Config& config, const Layout& l) {
  std::string body;
  for (std::uint64_t kt = 0; kt < l.kt; ++kt) {
    body += fmt::format("load mem=ub, dram={}, stride={}, row={}, col=0, rows={}, elems={}\n",
                        l.a + kt * config.rows * l.e, l.k * l.e, kt * l.m, l.m,
                        std::min<std::uint64_t>(config.rows, l.k - kt * config.rows));
  }
  return body;
}

// Launch 2: the folds, `passes` times over.
std::string Folds(const Config& config, const Layout& l, int passes) {
  std::vector<std::string> weights, matmuls;
  for (int pass = 0; pass < passes; ++pass) {
    for (std::uint64_t nt = 0; nt < l.nt; ++nt) {
      for (std::uint64_t kt = 0; kt < l.kt; ++kt) {
        const std::uint64_t rows = std::min<std::uint64_t>(config.rows, l.k - kt * config.rows);
        const std::uint64_t cols = std::min<std::uint64_t>(config.cols, l.n - nt * config.cols);
        weights.push_back(fmt::format("load_weights dram={}, stride={}, rows={}, cols={}\n",
                                      l.b + (kt * config.rows * l.n + nt * config.cols) * l.e,
                                      l.n * l.e, rows, cols));
        matmuls.push_back(fmt::format("matmul ub={}, acc={}, rows={}, k={}, pop{}\n", kt * l.m,
                                      nt * l.m, l.m, rows, kt > 0 ? ", accumulate" : ""));
      }
    }
  }
  const std::size_t ahead = std::min<std::size_t>(config.weight_fifo_tiles, weights.size());
  std::string body;
  for (std::size_t i = 0; i < ahead; ++i) body += weights[i];
  for (std::size_t i = 0; i < matmuls.size(); ++i) {
    body += matmuls[i];
    if (i + ahead < weights.size()) body += weights[i + ahead];
  }
  return body;
}

// Launch 3: the accumulators (M x N, 32-bit) to device memory.
std::string StoreOut(const Config& config, const Layout& l) {
  std::string body;
  for (std::uint64_t nt = 0; nt < l.nt; ++nt) {
    body += fmt::format("store mem=acc, dram={}, stride={}, row={}, col=0, rows={}, elems={}\n",
                        l.out + nt * config.cols * 4, l.n * 4, nt * l.m, l.m,
                        std::min<std::uint64_t>(config.cols, l.n - nt * config.cols));
  }
  return body;
}

// Small integers and halves: every bf16 product and every sum of this size is exact, so the
// result cannot be trivially zero and does not depend on the order of additions.
std::vector<std::uint8_t> RandomElements(const Config& config, std::uint64_t count,
                                         std::mt19937_64& rng) {
  std::vector<std::uint8_t> bytes;
  for (std::uint64_t i = 0; i < count; ++i) {
    const int value = static_cast<int>(rng() % 9) - 4;
    if (config.dtype == DType::kBf16) {
      const float f = static_cast<float>(value) + (rng() % 2 ? 0.5f : 0.0f);
      const auto bits = std::bit_cast<std::uint32_t>(f);
      bytes.push_back(static_cast<std::uint8_t>(bits >> 16));
      bytes.push_back(static_cast<std::uint8_t>(bits >> 24));
    } else {
      bytes.push_back(static_cast<std::uint8_t>(value));
    }
  }
  return bytes;
}

// The golden model and the RTL core, launched identically; every launch must succeed on both
// with the same MACS.
class Pair {
 public:
  explicit Pair(const Config& config)
      : config_(config), golden_(config),
        rtl_(MakeRtlDevice(config, Options())) {}
  // The bare core behind memory that answers after 8 cycles and never refuses a request.
  static RtlDeviceOptions Options() {
    RtlDeviceOptions options;
    options.memory = MemoryBackend::kIdeal;
    options.memory_latency = 8;
    options.memory_ready_percent = 100;
    return options;
  }
  void Write(std::uint64_t address, const std::vector<std::uint8_t>& bytes) {
    golden_.WriteMemory(address, bytes);
    rtl_->WriteMemory(address, bytes);
  }
  struct Launched {
    std::uint64_t cycles, stall_wfifo;
    double seconds;
  };
  Launched Launch(const std::string& what, const std::string& body) {
    const std::uint64_t pc = 0x10000;
    const image::Program program = assembly::Assemble(
        ".config " + config_.name + "\n.text at=" + std::to_string(pc) + "\n" + body + "halt\n",
        what);
    if (program.words.size() * 32 > 0xF0000) throw std::runtime_error(what + ": program too long");
    std::vector<std::uint8_t> text;
    for (const isa::Word& word : program.words) text.insert(text.end(), word.begin(), word.end());
    Write(pc, text);
    const auto count = static_cast<std::uint32_t>(program.words.size());
    const std::uint64_t golden_macs = golden_.Counter("MACS");
    const model::LaunchResult launched = golden_.Execute(pc, count);
    if (!launched.Ok()) throw std::runtime_error(what + ": golden model: " + launched.message);
    const std::uint64_t cycles = Counter(*rtl_, "CYCLES"), macs = Counter(*rtl_, "MACS");
    const std::uint64_t wfifo = Counter(*rtl_, "STALL_WFIFO");
    const auto offset = [](const char* name) { return regs::FindRegister(name)->offset; };
    rtl_->WriteRegister(offset("CMD_PC_LO"), static_cast<std::uint32_t>(pc));
    rtl_->WriteRegister(offset("CMD_PC_HI"), 0);
    rtl_->WriteRegister(offset("CMD_COUNT"), count);
    const double start = CpuSeconds();
    rtl_->WriteRegister(offset("DOORBELL"), 1);
    if (!rtl_->RunUntilIdle(4'000'000'000)) throw std::runtime_error(what + ": RTL did not finish");
    const double seconds = CpuSeconds() - start;
    if (rtl_->ReadRegister(offset("ERROR_CODE")) != 0) {
      throw std::runtime_error(what + ": the RTL faulted where the golden model did not");
    }
    if (Counter(*rtl_, "MACS") - macs != golden_.Counter("MACS") - golden_macs) {
      throw std::runtime_error(what + ": RTL and golden model count different MACS");
    }
    return {Counter(*rtl_, "CYCLES") - cycles, Counter(*rtl_, "STALL_WFIFO") - wfifo, seconds};
  }
  void ExpectSameMemory(const std::string& what, std::uint64_t address, std::uint64_t length) {
    std::vector<std::uint8_t> want(length), got(length);
    golden_.ReadMemory(address, want);
    rtl_->ReadMemory(address, got);
    if (want != got) throw std::runtime_error(what + ": the RTL result differs from the golden model");
    if (std::all_of(want.begin(), want.end(), [](std::uint8_t v) { return v == 0; })) {
      throw std::runtime_error(what + ": the result is all zeros: nothing would be checked");
    }
  }

 private:
  const Config& config_;
  model::GoldenModel golden_;
  std::unique_ptr<RtlDevice> rtl_;
};

}  // namespace

void OnChipTable(const Config& config, const std::vector<OnChipShape>& shapes) {
  const double pes = double(config.rows) * config.cols;
  fmt::print("\n### On-chip GEMMs on {} ({}x{} {}): LOAD_WEIGHTS + MATMUL folds back to back, "
             "operands in the unified buffer\n\n| GEMM | M | K | N | folds | cycles | MXU util | "
             "cycles, folds twice | steady-state util | STALL_WFIFO (twice) | CPU s |\n"
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
             config.name, config.rows, config.cols, DTypeName(config.dtype));
  for (const OnChipShape& shape : shapes) {
    const Layout l(config, shape);
    if (l.kt * l.m > config.UbRows() || l.nt * l.m > config.AccRows() || l.m > 65535) {
      throw std::runtime_error(fmt::format(
          "{}: A needs {} UB rows (of {}) and the result {} accumulator rows (of {})", shape.name,
          l.kt * l.m, config.UbRows(), l.nt * l.m, config.AccRows()));
    }
    Pair pair(config);
    std::mt19937_64 rng(1);
    pair.Write(l.a, RandomElements(config, l.m * l.k, rng));
    pair.Write(l.b, RandomElements(config, l.k * l.n, rng));
    pair.Launch(shape.name + " (load A)", LoadA(config, l));
    const auto once = pair.Launch(shape.name + " (folds)", Folds(config, l, 1));
    pair.Launch(shape.name + " (store)", StoreOut(config, l));
    pair.ExpectSameMemory(shape.name, l.out, l.m * l.n * 4);
    const auto twice = pair.Launch(shape.name + " (folds twice)", Folds(config, l, 2));
    pair.Launch(shape.name + " (store)", StoreOut(config, l));
    pair.ExpectSameMemory(shape.name + " (folds twice)", l.out, l.m * l.n * 4);
    // Useful MACs per pass: the padding of ragged K and N tiles does not count.
    const double macs = double(l.m) * double(l.k) * double(l.n);
    fmt::print("| {} | {} | {} | {} | {} | {} | {:.1f}% | {} | {:.2f}% | {} | {:.1f} |\n",
               shape.name, l.m, l.k, l.n, l.kt * l.nt, once.cycles,
               100.0 * macs / (pes * double(once.cycles)), twice.cycles,
               100.0 * macs / (pes * double(twice.cycles - once.cycles)), twice.stall_wfifo,
               once.seconds + twice.seconds);
    std::fflush(stdout);
  }
}

std::uint64_t Counter(RtlDevice& device, const std::string& name) {
  const std::uint32_t lo = regs::FindRegister("PERF_" + name + "_LO")->offset;
  return device.ReadRegister(lo) | std::uint64_t{device.ReadRegister(lo + 4)} << 32;
}

}  // namespace systole::rtl::bench
