// The whole Verilated core against the whole golden model, through the same host interface:
// programs are written to device memory and launched with CMD_PC/CMD_COUNT/DOORBELL, and
// afterwards every byte of the data and dump regions, the error state and the functional
// counters must be identical.
//
//  * random legal programs (program_generator.hpp) that dump every used UB and accumulator row;
//  * the same programs with one instruction made illegal (opcode, reserved bit, range), which
//    must fault at the same instruction with the same code after the same effects;
//  * the hand-written examples in examples/asm/;
//  * the identity registers.
#include <gtest/gtest.h>

#include <algorithm>

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "arch/regs/identity.hpp"
#include "arch/regs/regmap.hpp"
#include "sim/rtl/rtl_device.hpp"
#include "tests/rtl/core/core_pair.hpp"
#include "tests/rtl/core/program_generator.hpp"
#include "tests/rtl/util/rtl_test_util.hpp"
#include "toolchain/asm/disassembler.hpp"

namespace systole::rtl {
namespace {

using test::Encode;
using test::Pair;

// After a mismatch: the shortest prefix of `program` (followed by SYNC, the dump and HALT) whose
// results differ, printed as assembly — the smallest case to look at, with its waveform.
void ReportShortestFailingPrefix(const Config& config, const test::GeneratedProgram& program,
                                 std::span<const std::uint8_t> data, std::uint64_t seed) {
  const std::size_t body = program.instructions.size() - 3;  // without the dump and HALT
  for (std::size_t n = 1; n <= body; ++n) {
    std::vector<isa::Instruction> prefix(program.instructions.begin(),
                                         program.instructions.begin() + static_cast<std::ptrdiff_t>(n));
    prefix.push_back(isa::MakeInstruction(isa::Opcode::kSync, {}));
    prefix.insert(prefix.end(), program.instructions.end() - 3, program.instructions.end());
    for (auto& insn : prefix) {
      if (&insn >= &prefix[n]) insn.wait = insn.signal = 0;  // the dump is ordered by the SYNC
    }
    const std::filesystem::path wave = std::filesystem::path(SYSTOLE_WAVES_DIR) /
                                       (test::TestName() + ".prefix.fst");
    Pair pair(config, seed, wave);
    pair.WriteMemory(test::kDataAddress, data);
    pair.WriteMemory(test::kTextAddress, Encode(prefix));
    pair.Launch(test::kTextAddress, static_cast<std::uint32_t>(prefix.size()));
    const std::uint64_t dump = program.ub_rows_used * config.UbRowBytes() +
                               program.acc_rows_used * config.AccRowBytes();
    std::vector<std::uint8_t> want(dump), got(dump);
    pair.golden_.ReadMemory(test::kDumpAddress, want);
    pair.rtl_->ReadMemory(test::kDumpAddress, got);
    std::vector<std::uint8_t> want_data(data.size()), got_data(data.size());
    pair.golden_.ReadMemory(test::kDataAddress, want_data);
    pair.rtl_->ReadMemory(test::kDataAddress, got_data);
    if (want == got && want_data == got_data) {
      std::filesystem::remove(wave);
      continue;
    }
    std::string listing;
    for (std::size_t i = 0; i < n; ++i) {
      listing += "  " + std::to_string(i) + ": " + assembly::DisassembleInstruction(prefix[i]) + "\n";
    }
    pair.ExpectSameMemory(test::kDumpAddress, dump, "prefix: UB/ACC dump");
    pair.ExpectSameMemory(test::kDataAddress, data.size(), "prefix: data region");
    ADD_FAILURE() << "shortest failing prefix: " << n << " instructions (waveform " << wave.string()
                  << "):\n" << listing;
    return;
  }
}

class CoreTest : public ::testing::TestWithParam<std::string> {};

// Random programs per configuration, sized so that each configuration's entry takes about ten
// seconds on the 2-core development machine (rtl/README.md has the measured times; a 40-
// instruction program takes ~70 ms on tiny and small-int8 and ~200 ms on small, whose bf16
// datapath simulates slower). SYSTOLE_RTL_PROGRAMS=N runs N per configuration (a longer soak).
int ProgramCount(const Config& config) {
  if (const char* env = std::getenv("SYSTOLE_RTL_PROGRAMS")) return std::atoi(env);
  return config.dtype == DType::kBf16 ? 50 : 150;
}

TEST_P(CoreTest, IdentityRegistersDescribeTheConfiguration) {
  const Config config = LoadConfig(GetParam());
  // Both backends where this build has them: the SoC passes the core's registers through.
  for (const MemoryBackend memory : {MemoryBackend::kIdeal, MemoryBackend::kHbm}) {
    const auto built = BuiltRtlConfigs(memory);
    if (std::find(built.begin(), built.end(), config.name) == built.end()) continue;
    SCOPED_TRACE(MemoryBackendName(memory));
    RtlDeviceOptions options;
    options.memory = memory;
    auto rtl = MakeRtlDevice(config, options);
    for (const auto& [offset, value] : regs::IdentityRegisters(config)) {
      EXPECT_EQ(rtl->ReadRegister(offset), value) << "offset 0x" << std::hex << offset;
    }
    Config decoded =
        regs::DecodeIdentity([&](std::uint32_t offset) { return rtl->ReadRegister(offset); });
    decoded.description = config.description;  // the one thing registers do not carry
    EXPECT_EQ(decoded, config);
  }
}

TEST_P(CoreTest, RandomLegalProgramsMatchTheGoldenModel) {
  const Config config = LoadConfig(GetParam());
  const std::uint64_t seed = test::Seed();
  std::mt19937_64 rng(seed);
  test::Waveform wave(false);
  std::vector<std::uint8_t> data(test::kDataBytes);
  std::optional<test::GeneratedProgram> failing;
  std::uint64_t cycles = 0, instructions = 0;
  const int programs = ProgramCount(config);
  for (int round = 0; round < programs && !failing; ++round) {
    // A fresh device per program, so that a failure replays from the program alone.
    Pair pair(config, seed + static_cast<std::uint64_t>(round), wave.Path());
    {
      SCOPED_TRACE("program " + std::to_string(round));
      for (auto& b : data) b = static_cast<std::uint8_t>(rng());
      pair.WriteMemory(test::kDataAddress, data);
      auto program = test::GenerateProgram(config, rng, 40);
      pair.WriteMemory(test::kTextAddress, Encode(program.instructions));
      const std::uint64_t start = pair.rtl_->Cycle();
      ASSERT_NO_FATAL_FAILURE(pair.Launch(test::kTextAddress,
                                          static_cast<std::uint32_t>(program.instructions.size())));
      cycles += pair.rtl_->Cycle() - start;
      instructions += program.instructions.size();
      ASSERT_EQ(pair.golden_.LastErrorMessage(), "");
      const std::uint64_t dump = program.ub_rows_used * config.UbRowBytes() +
                                 program.acc_rows_used * config.AccRowBytes();
      pair.ExpectSameMemory(test::kDumpAddress, dump, "UB/ACC dump");
      pair.ExpectSameMemory(test::kDataAddress, test::kDataBytes, "data region");
      pair.ExpectSameState();
      if (::testing::Test::HasFailure()) failing = std::move(program);
    }
  }
  std::cout << "[ core     ] " << instructions << " instructions in " << cycles << " cycles\n";
  // One simulation at a time: Verilator 5.006 can deadlock destroying a model while another
  // instance of the same model is alive, so the first pair is gone before the search starts.
  if (failing) ReportShortestFailingPrefix(config, *failing, data, seed);
}

// The bf16-only transcendental functions: an int8 configuration faults ILLEGAL_FIELD at the
// VECTOR (after the LOAD before it), a bf16 one runs it; op=pass with b far outside the buffer
// is legal in both; REDUCE beyond the row width faults SHAPE. RTL and model alike.
TEST_P(CoreTest, MathAndReduceOperandChecksMatchTheModel) {
  using isa::Field;
  using isa::Opcode;
  const Config config = LoadConfig(GetParam());
  const std::uint64_t seed = test::Seed();
  const auto run = [&](const isa::Instruction& insn) {
    Pair pair(config, seed);
    const std::vector<isa::Instruction> program = {
        isa::MakeInstruction(Opcode::kLoad, {{Field::kDram, test::kDataAddress}, {Field::kRows, 2},
                                             {Field::kElems, 1}, {Field::kStride, 64}}),
        insn, isa::MakeInstruction(Opcode::kHalt, {})};
    pair.WriteMemory(test::kTextAddress, Encode(program));
    ASSERT_NO_FATAL_FAILURE(pair.Launch(test::kTextAddress, 3));
    pair.ExpectSameState();
  };
  run(isa::MakeInstruction(Opcode::kVector, {{Field::kOp, 0}, {Field::kMath, 1}, {Field::kRows, 2},
                                             {Field::kB, 4}, {Field::kDst, 8}}));
  run(isa::MakeInstruction(Opcode::kVector, {{Field::kOp, 5}, {Field::kRows, 2},
                                             {Field::kB, 0xFFFFFF}, {Field::kDst, 8}}));
  run(isa::MakeInstruction(Opcode::kReduce, {{Field::kRows, 2}, {Field::kDst, 8},
                                             {Field::kElems, config.UbRowElems() + 1}}));
}

// ACCVEC through the whole core: accumulator rows loaded from random bytes (random fp32 bit
// patterns: NaNs, subnormals and all), every op and form of operand b, in place and chained,
// stored back and compared with the model; in int8 configurations it faults ILLEGAL_FIELD after
// the LOAD before it. Then the operand checks of docs/ISA.md in order: scalar with bcast,
// each row range. The core's cycles for the launch are printed beside the model's estimate.
TEST_P(CoreTest, AccVecMatchesTheModelThroughTheCore) {
  using isa::Field;
  using isa::Opcode;
  const Config config = LoadConfig(GetParam());
  const std::uint64_t seed = test::Seed();
  std::mt19937_64 rng(seed);
  std::vector<std::uint8_t> data(test::kDataBytes);
  for (auto& b : data) b = static_cast<std::uint8_t>(rng());
  const std::uint64_t cols = config.cols, acc_rows = config.AccRows();
  const std::uint64_t rows = 12;
  const auto acc_dma = [&](Opcode opcode, std::uint64_t dram, std::uint64_t row, std::uint64_t n) {
    return isa::MakeInstruction(opcode, {{Field::kMem, 1}, {Field::kDram, dram}, {Field::kStride, 4 * cols},
                                         {Field::kRow, row}, {Field::kRows, n}, {Field::kElems, cols}});
  };
  const auto accvec = [](isa::AccOp op, std::uint64_t a, std::uint64_t b, std::uint64_t dst,
                         std::uint64_t n, std::uint64_t bcast, std::uint64_t bcol, std::uint64_t scalar,
                         std::uint64_t imm) {
    return isa::MakeInstruction(Opcode::kAccVec, {{Field::kOp, static_cast<std::uint64_t>(op)}, {Field::kA, a},
                                                  {Field::kB, b}, {Field::kDst, dst}, {Field::kRows, n},
                                                  {Field::kBcast, bcast}, {Field::kBcol, bcol},
                                                  {Field::kScalar, scalar}, {Field::kImm, imm}});
  };
  std::vector<isa::Instruction> program = {acc_dma(Opcode::kLoad, test::kDataAddress, 0, 2 * rows),
                                           isa::MakeInstruction(Opcode::kSync, {})};
  for (int i = 0; i < 14; ++i) {
    const auto op = static_cast<isa::AccOp>(i % 7);
    const unsigned form = static_cast<unsigned>(rng() % 5);  // row, bcast, bcol, both, immediate
    const std::uint64_t a = rng() % rows, b = rng() % rows, n = 1 + rng() % rows;
    const std::uint64_t dst = rng() % 3 == 0 ? a : rng() % rows;
    program.push_back(accvec(op, a, b, dst, n, form == 1 || form == 3, form == 2 || form == 3,
                             form == 4, static_cast<std::uint32_t>(rng())));
  }
  program.push_back(isa::MakeInstruction(Opcode::kSync, {}));
  program.push_back(acc_dma(Opcode::kStore, test::kDumpAddress, 0, 2 * rows));
  program.push_back(isa::MakeInstruction(Opcode::kHalt, {}));
  {
    Pair pair(config, seed);
    pair.WriteMemory(test::kDataAddress, data);
    pair.WriteMemory(test::kTextAddress, Encode(program));
    ASSERT_NO_FATAL_FAILURE(pair.Launch(test::kTextAddress, static_cast<std::uint32_t>(program.size())));
    pair.ExpectSameState();
    pair.ExpectSameMemory(test::kDumpAddress, 2 * rows * 4 * cols, "accumulator rows");
    std::cout << "[ accvec   ] " << program.size() << " instructions: PERF_CYCLES rtl "
              << test::Read64(*pair.rtl_, "CYCLES") << ", model estimate " << test::Read64(pair.golden_, "CYCLES")
              << "\n";
  }
  const auto run = [&](const isa::Instruction& insn) {
    Pair pair(config, seed);
    const std::vector<isa::Instruction> checks = {acc_dma(Opcode::kLoad, test::kDataAddress, 0, 1), insn,
                                                  isa::MakeInstruction(Opcode::kHalt, {})};
    pair.WriteMemory(test::kTextAddress, Encode(checks));
    ASSERT_NO_FATAL_FAILURE(pair.Launch(test::kTextAddress, 3));
    pair.ExpectSameState();
  };
  run(accvec(isa::AccOp::kMul, 0, 0, 0, 1, 1, 0, 1, 0));                          // scalar + bcast
  run(accvec(isa::AccOp::kMul, 0, 0, 0, 1, 0, 1, 1, 0));                          // scalar + bcol
  run(accvec(isa::AccOp::kAdd, acc_rows - 1, 0, 0, 2, 0, 0, 0, 0));              // a
  run(accvec(isa::AccOp::kAdd, 0, acc_rows - 1, 0, 2, 0, 0, 0, 0));              // b
  run(accvec(isa::AccOp::kAdd, 0, acc_rows - 1, 0, 2, 1, 0, 0, 0));              // b, bcast: fits
  run(accvec(isa::AccOp::kSqrt, 0, 0xFFFFFF, 0, 2, 0, 0, 0, 0));                 // sqrt reads no b
  run(accvec(isa::AccOp::kAdd, 0, 0xFFFFFF, acc_rows - 1, 2, 0, 0, 1, 0));       // dst
}

TEST_P(CoreTest, FaultingProgramsStopAtTheSameInstructionWithTheSameError) {
  const Config config = LoadConfig(GetParam());
  const std::uint64_t seed = test::Seed();
  std::mt19937_64 rng(seed);
  Pair pair(config, seed);
  std::vector<std::uint8_t> data(test::kDataBytes);
  for (auto& b : data) b = static_cast<std::uint8_t>(rng());
  pair.WriteMemory(test::kDataAddress, data);
  for (int round = 0; round < 8; ++round) {
    SCOPED_TRACE("program " + std::to_string(round));
    auto program = test::GenerateProgram(config, rng, 16);
    auto bytes = Encode(program.instructions);
    // Break one instruction: an undefined opcode, a reserved bit, or a row far out of range.
    const std::size_t victim = rng() % (program.instructions.size() - 1);
    std::uint8_t* word = bytes.data() + 32 * victim;
    switch (rng() % 3) {
      case 0: word[0] = static_cast<std::uint8_t>(0x0D + rng() % 0xF0); break;
      case 1: word[31] |= 0x80; break;
      default: word[0] = 0x04; word[5] = word[6] = 0xFF; word[10] = 1; break;  // MATMUL ub far away
    }
    pair.WriteMemory(test::kTextAddress, bytes);
    ASSERT_NO_FATAL_FAILURE(pair.Launch(test::kTextAddress, static_cast<std::uint32_t>(program.instructions.size())));
    pair.ExpectSameState();
    ASSERT_NO_FATAL_FAILURE(pair.ExpectSameMemory(test::kDataAddress, test::kDataBytes, "data region"));
    pair.WriteRegister("CTRL", regs::Mask(regs::FieldOf("CTRL", "CLEAR_ERROR")));
    pair.WriteRegister("IRQ_STATUS", 7);
    if (::testing::Test::HasFailure()) return;
  }
}

// The CI configurations (SYSTOLE_RTL_CONFIGS; a long build's v2 has its own test in long/).
std::vector<std::string> TestedConfigs() {
  std::vector<std::string> configs;
  std::string list = SYSTOLE_RTL_TEST_CONFIGS;
  for (std::size_t start = 0; start < list.size();) {
    std::size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    configs.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return configs;
}

INSTANTIATE_TEST_SUITE_P(Configs, CoreTest, ::testing::ValuesIn(TestedConfigs()),
                         [](const auto& param_info) {
                           std::string name = param_info.param;
                           for (char& c : name) if (c == '-') c = '_';
                           return name;
                         });

}  // namespace
}  // namespace systole::rtl
