// Every error code a launch can raise, with its FAULT_PC, and proof that faults are precise:
// the instruction before the fault completed, the faulting one and everything after did nothing.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <random>

#include "tests/model/model_test_util.hpp"

namespace systole::model {
namespace {

using namespace testing;  // NOLINT: test helpers
using isa::MemSpace;

// Everything a faulting instruction could have written, to compare before and after.
struct Snapshot {
  std::vector<std::uint8_t> ub, acc, data;
  std::size_t fifo = 0;
  bool operator==(const Snapshot&) const = default;
};

Snapshot Take(GoldenModel& model) {
  Snapshot s;
  for (std::uint64_t r = 0; r < model.UbRows(); ++r) {
    const auto row = model.UbRow(r);
    s.ub.insert(s.ub.end(), row.begin(), row.end());
  }
  for (std::uint64_t r = 0; r < model.AccRows(); ++r) {
    for (std::uint32_t v : model.AccRow(r)) {
      for (std::uint32_t b = 0; b < 4; ++b) s.acc.push_back(static_cast<std::uint8_t>(v >> (8 * b)));
    }
  }
  s.data = ReadArray<std::uint8_t>(model, kDataAddress, 0x1000);
  s.fifo = model.WeightFifoOccupancy();
  return s;
}

struct FaultCase {
  const char* name;
  const char* config;
  std::vector<isa::Instruction> before;  // run first, must complete
  isa::Instruction faulting;
  ErrorCode code;
};

// Runs before..., faulting, then a LOAD that would write UB row 0, then HALT.
void ExpectPreciseFault(const FaultCase& c) {
  SCOPED_TRACE(c.name);
  GoldenModel model(LoadConfig(c.config));
  std::vector<std::uint8_t> pattern(0x1000);
  for (std::size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<std::uint8_t>(i * 7 + 1);
  model.WriteMemory(kDataAddress, pattern);
  // The reference state: the model after running only `before` (plus HALT) in a twin.
  GoldenModel twin(LoadConfig(c.config));
  twin.WriteMemory(kDataAddress, pattern);
  std::vector<isa::Instruction> before = c.before;
  before.push_back(Halt());
  const LaunchResult twin_result = RunProgram(twin, before);
  ASSERT_TRUE(twin_result.Ok()) << twin_result.message;

  std::vector<isa::Instruction> program = c.before;
  program.push_back(c.faulting);
  program.push_back(Dma(Opcode::kLoad, MemSpace::kUb, kDataAddress, 0, 0, 0, 1, 4));
  program.push_back(Halt());
  const LaunchResult result = RunProgram(model, program);
  EXPECT_EQ(result.error, c.code) << result.message;
  EXPECT_EQ(result.fault_pc, kProgramAddress + 32 * c.before.size());
  EXPECT_EQ(result.retired, c.before.size());
  EXPECT_EQ(Register(model, "ERROR_CODE"), static_cast<std::uint32_t>(c.code));
  EXPECT_EQ(Register(model, "FAULT_PC_LO"), kProgramAddress + 32 * c.before.size());
  EXPECT_EQ(Register(model, "STATUS") & 0x2, 0x2u);
  EXPECT_EQ(Register(model, "IRQ_STATUS"), 0x2u);  // ERROR, not DONE
  EXPECT_EQ(Register(model, "LAUNCHES_DONE"), 0u);
  EXPECT_NE(result.message.find(std::string(regs::ErrorName(c.code))), std::string::npos)
      << result.message;
  EXPECT_TRUE(Take(model) == Take(twin)) << "the faulting instruction or a later one had an effect";
}

isa::Instruction WidenLoad(isa::Instruction load) {
  load[Field::kWiden] = 1;
  return load;
}

// A widening LOAD that would fault without widen but not with it: aligned to 2 and ending at the
// last byte of device memory.
TEST(Errors, WidenLoadsAreCheckedWithTheirElementSize) {
  GoldenModel model(LoadConfig("small"));
  const std::uint64_t end = model.config().memory_bytes;
  const LaunchResult ok = RunProgram(model, {WidenLoad(Dma(Opcode::kLoad, MemSpace::kAcc, end - 64, 34, 0, 0, 2, 15)),
                                             Halt()});
  EXPECT_TRUE(ok.Ok()) << regs::ErrorName(ok.error);
}

TEST(Errors, RangeShapeAlignmentAndFlowControl) {
  const isa::Instruction load_marker = Dma(Opcode::kLoad, MemSpace::kUb, kDataAddress, 4, 5, 0, 1, 4);
  const isa::Instruction weights = LoadWeights(kDataAddress, 4, 4, 4);
  const std::vector<FaultCase> cases = {
      // tiny: 4x4 int8, 1024 UB rows, 64 ACC rows, 1 MiB, weight FIFO 2.
      {"load ub rows", "tiny", {load_marker},
       Dma(Opcode::kLoad, MemSpace::kUb, kDataAddress, 4, 1020, 0, 5, 4), ErrorCode::kUbRange},
      {"load acc rows", "tiny", {load_marker},
       Dma(Opcode::kLoad, MemSpace::kAcc, kDataAddress, 16, 63, 0, 2, 4), ErrorCode::kAccRange},
      {"store ub rows", "tiny", {load_marker},
       Dma(Opcode::kStore, MemSpace::kUb, kDataAddress, 4, 0xFFFFFF, 0, 1, 4), ErrorCode::kUbRange},
      {"load dram end", "tiny", {load_marker},
       Dma(Opcode::kLoad, MemSpace::kUb, (1 << 20) - 4, 4, 0, 0, 2, 4), ErrorCode::kDramRange},
      {"store dram huge address", "tiny", {load_marker},
       Dma(Opcode::kStore, MemSpace::kUb, 0xFFFFFFFFFFFC, 4, 0, 0, 1, 4), ErrorCode::kDramRange},
      {"store dram huge stride", "tiny", {load_marker},
       Dma(Opcode::kStore, MemSpace::kAcc, kDataAddress, 0xFFFFFFFC, 0, 0, 2, 4),
       ErrorCode::kDramRange},
      {"load shape", "tiny", {load_marker},
       Dma(Opcode::kLoad, MemSpace::kUb, kDataAddress, 4, 0, 2, 1, 3), ErrorCode::kShape},
      {"load acc shape", "tiny", {load_marker},
       Dma(Opcode::kLoad, MemSpace::kAcc, kDataAddress, 16, 0, 0xFFFF, 1, 1), ErrorCode::kShape},
      {"acc misaligned address", "tiny", {load_marker},
       Dma(Opcode::kLoad, MemSpace::kAcc, kDataAddress + 2, 16, 0, 0, 1, 1), ErrorCode::kMisaligned},
      {"acc misaligned stride", "tiny", {load_marker},
       Dma(Opcode::kStore, MemSpace::kAcc, kDataAddress, 6, 0, 0, 2, 1), ErrorCode::kMisaligned},
      // A widening LOAD's elements are E bytes: aligned to 2 on bf16 (not 4), its span half as long.
      {"widen bf16 misaligned address", "small", {load_marker},
       WidenLoad(Dma(Opcode::kLoad, MemSpace::kAcc, kDataAddress + 1, 32, 0, 0, 1, 4)), ErrorCode::kMisaligned},
      {"widen bf16 misaligned stride", "small", {load_marker},
       WidenLoad(Dma(Opcode::kLoad, MemSpace::kAcc, kDataAddress, 33, 0, 0, 2, 4)), ErrorCode::kMisaligned},
      {"widen dram end", "tiny", {load_marker},
       WidenLoad(Dma(Opcode::kLoad, MemSpace::kAcc, (1 << 20) - 4, 4, 0, 0, 2, 4)), ErrorCode::kDramRange},
      {"widen acc rows", "tiny", {load_marker},
       WidenLoad(Dma(Opcode::kLoad, MemSpace::kAcc, kDataAddress, 4, 63, 0, 2, 4)), ErrorCode::kAccRange},
      {"bf16 misaligned", "small", {load_marker},
       Dma(Opcode::kLoad, MemSpace::kUb, kDataAddress + 1, 32, 0, 0, 1, 4), ErrorCode::kMisaligned},
      {"misaligned before range", "small", {load_marker},
       Dma(Opcode::kLoad, MemSpace::kUb, 0xFFFFFFFFFFF1, 32, 0xFFFFFF, 0, 1, 4),
       ErrorCode::kMisaligned},
      {"weights shape rows", "tiny", {load_marker}, LoadWeights(kDataAddress, 4, 5, 4),
       ErrorCode::kShape},
      {"weights shape cols", "tiny", {load_marker}, LoadWeights(kDataAddress, 4, 4, 5),
       ErrorCode::kShape},
      {"weights misaligned", "small", {load_marker}, LoadWeights(kDataAddress, 33, 4, 4),
       ErrorCode::kMisaligned},
      {"weights dram", "tiny", {load_marker}, LoadWeights((1 << 20) - 15, 4, 4, 4),
       ErrorCode::kDramRange},
      {"weights overflow", "tiny", {weights, weights}, weights, ErrorCode::kWfifoOverflow},
      {"matmul underflow", "tiny", {weights, Matmul(0, 0, 1, 4, true, false)},
       Matmul(0, 0, 1, 4, true, false), ErrorCode::kWfifoUnderflow},
      {"matmul no weights", "tiny", {load_marker, weights}, Matmul(0, 0, 1, 4, false, false),
       ErrorCode::kNoWeights},
      {"matmul shape", "tiny", {weights}, Matmul(0, 0, 1, 5, true, false), ErrorCode::kShape},
      {"matmul ub", "tiny", {weights}, Matmul(1000, 0, 25, 4, true, false), ErrorCode::kUbRange},
      {"matmul acc", "tiny", {weights}, Matmul(0, 60, 5, 4, true, false), ErrorCode::kAccRange},
      {"matmul range before fifo", "tiny", {}, Matmul(0, 60, 5, 4, true, false),
       ErrorCode::kAccRange},
      {"activate acc", "tiny", {load_marker},
       Insn(Opcode::kActivate, {{Field::kAcc, 60}, {Field::kUb, 0}, {Field::kRows, 5}}),
       ErrorCode::kAccRange},
      {"activate bias row", "tiny", {load_marker},
       Insn(Opcode::kActivate,
            {{Field::kAcc, 0}, {Field::kUb, 0}, {Field::kRows, 1}, {Field::kBias, 1}, {Field::kBiasRow, 64}}),
       ErrorCode::kAccRange},
      {"activate ub", "tiny", {load_marker},
       Insn(Opcode::kActivate, {{Field::kAcc, 0}, {Field::kUb, 1023}, {Field::kRows, 2}}),
       ErrorCode::kUbRange},
      {"vector a", "tiny", {load_marker},
       Insn(Opcode::kVector, {{Field::kA, 1023}, {Field::kB, 0}, {Field::kDst, 0}, {Field::kRows, 2}}),
       ErrorCode::kUbRange},
      {"vector b", "tiny", {load_marker},
       Insn(Opcode::kVector, {{Field::kA, 0}, {Field::kB, 1023}, {Field::kDst, 0}, {Field::kRows, 2}}),
       ErrorCode::kUbRange},
      {"vector dst", "tiny", {load_marker},
       Insn(Opcode::kVector, {{Field::kA, 0}, {Field::kB, 0}, {Field::kDst, 1023}, {Field::kRows, 2}}),
       ErrorCode::kUbRange},
      {"pool source", "tiny", {load_marker},
       Insn(Opcode::kPool, {{Field::kSrc, 1000}, {Field::kDst, 0}, {Field::kInW, 8}, {Field::kOutH, 2},
                            {Field::kOutW, 2}, {Field::kWinH, 2}, {Field::kWinW, 2},
                            {Field::kStrideH, 2}, {Field::kStrideW, 2}}),
       ErrorCode::kUbRange},
      {"pool destination", "tiny", {load_marker},
       Insn(Opcode::kPool, {{Field::kSrc, 0}, {Field::kDst, 1021}, {Field::kInW, 8}, {Field::kOutH, 2},
                            {Field::kOutW, 2}, {Field::kWinH, 2}, {Field::kWinW, 2},
                            {Field::kStrideH, 2}, {Field::kStrideW, 2}}),
       ErrorCode::kUbRange},
      {"token underflow", "tiny", {load_marker, Sync()},
       Insn(Opcode::kStore, {{Field::kDram, kDataAddress}, {Field::kRows, 1}, {Field::kElems, 1}},
            kLoadUnit),
       ErrorCode::kTokenUnderflow},
  };
  for (const FaultCase& c : cases) ExpectPreciseFault(c);
}

TEST(Errors, TokensMatchSignalsAndWaitsPerPair) {
  // A token sent to the store unit cannot satisfy the vector unit, nor one from another producer.
  const isa::Instruction load_to_store =
      Insn(Opcode::kLoad, {{Field::kDram, kDataAddress}, {Field::kRows, 1}, {Field::kElems, 1}}, 0,
           kStoreUnit);
  const isa::Instruction store_waits_load =
      Insn(Opcode::kStore, {{Field::kDram, kDataAddress}, {Field::kRows, 1}, {Field::kElems, 1}},
           kLoadUnit);
  ExpectPreciseFault({"wrong consumer", "tiny", {load_to_store},
                      Insn(Opcode::kVector, {{Field::kRows, 1}}, kLoadUnit, 0),
                      ErrorCode::kTokenUnderflow});
  ExpectPreciseFault({"second wait", "tiny", {load_to_store, store_waits_load}, store_waits_load,
                      ErrorCode::kTokenUnderflow});
  ExpectPreciseFault({"two producers", "tiny", {load_to_store},
                      Insn(Opcode::kStore, {{Field::kDram, kDataAddress}, {Field::kRows, 1}, {Field::kElems, 1}},
                           kLoadUnit | kVectorUnit),
                      ErrorCode::kTokenUnderflow});
  GoldenModel model(LoadConfig("tiny"));
  RunOk(model, {load_to_store, load_to_store, store_waits_load, store_waits_load, Halt()});
}

TEST(Errors, TokenOverflowAtCapacity) {
  const isa::Instruction signal =
      Insn(Opcode::kLoad, {{Field::kDram, kDataAddress}, {Field::kRows, 1}, {Field::kElems, 1}}, 0,
           kMxuUnit);
  const std::uint32_t capacity = LoadConfig("tiny").token_capacity;
  ExpectPreciseFault({"overflow", "tiny", std::vector<isa::Instruction>(capacity, signal), signal,
                      ErrorCode::kTokenOverflow});
  // A wait in between makes room for one more.
  std::vector<isa::Instruction> program(capacity, signal);
  program.push_back(Insn(Opcode::kMatmul, {{Field::kRows, 1}, {Field::kK, 1}, {Field::kPop, 1}},
                         kLoadUnit, 0));
  program.insert(program.begin(), LoadWeights(kDataAddress, 4, 4, 4));
  program.push_back(signal);
  program.push_back(Halt());
  GoldenModel model(LoadConfig("tiny"));
  RunOk(model, program);
}

// Writes raw words (which the encoder would refuse) and runs them after one good LOAD.
LaunchResult RunRawAfterLoad(GoldenModel& model, const isa::Word& word) {
  const isa::Word load = isa::EncodeOrThrow(Dma(Opcode::kLoad, MemSpace::kUb, kDataAddress, 4, 9, 0, 1, 4));
  const isa::Word halt = isa::EncodeOrThrow(Halt());
  std::vector<std::uint8_t> bytes(load.begin(), load.end());
  bytes.insert(bytes.end(), word.begin(), word.end());
  bytes.insert(bytes.end(), halt.begin(), halt.end());
  model.WriteMemory(kProgramAddress, bytes);
  model.WriteMemory(kDataAddress, std::vector<std::uint8_t>{9, 8, 7, 6});
  return model.Execute(kProgramAddress, 3);
}

TEST(Errors, DecodeErrors) {
  struct RawCase {
    const char* name;
    isa::Word word;
    ErrorCode code;
  };
  isa::Word zero{};
  isa::Word undefined{};
  undefined[0] = 0x0D;  // the first opcode after ACCVEC
  isa::Word reserved = isa::EncodeOrThrow(Halt());
  reserved[31] = 0x80;  // bit 255
  isa::Word own_unit = isa::EncodeOrThrow(Dma(Opcode::kLoad, MemSpace::kUb, 0, 0, 0, 0, 1, 1));
  own_unit[1] |= 0x01;  // wait bit 0 = the load unit itself
  isa::Word zero_rows = isa::EncodeOrThrow(Dma(Opcode::kLoad, MemSpace::kUb, 0, 0, 0, 0, 1, 1));
  zero_rows[19] = 0;  // rows (bits 152..167) = 0
  zero_rows[20] = 0;
  isa::Word func7 = isa::EncodeOrThrow(Insn(Opcode::kActivate, {{Field::kRows, 1}}));
  func7[2] |= 0x38;  // func (bits 19..21) = 7
  for (const RawCase& c : {RawCase{"opcode 0", zero, ErrorCode::kIllegalOpcode},
                           RawCase{"opcode 0x0d", undefined, ErrorCode::kIllegalOpcode},
                           RawCase{"reserved bit", reserved, ErrorCode::kReservedBits},
                           RawCase{"own unit", own_unit, ErrorCode::kIllegalField},
                           RawCase{"rows 0", zero_rows, ErrorCode::kIllegalField},
                           RawCase{"func 7", func7, ErrorCode::kIllegalField}}) {
    SCOPED_TRACE(c.name);
    GoldenModel model(LoadConfig("tiny"));
    const LaunchResult result = RunRawAfterLoad(model, c.word);
    EXPECT_EQ(result.error, c.code) << result.message;
    EXPECT_EQ(result.fault_pc, kProgramAddress + 32);
    EXPECT_EQ(result.retired, 1u);
    EXPECT_EQ(model.UbInt8(9, 0), 9);  // the LOAD before completed
    EXPECT_EQ(Register(model, "FAULT_PC_LO"), kProgramAddress + 32);
  }
}

TEST(Errors, ProgramOverrunAndFetchOutsideMemory) {
  GoldenModel model(LoadConfig("tiny"));
  const LaunchResult overrun = RunProgram(model, {Sync(), Sync()});  // no HALT
  EXPECT_EQ(overrun.error, ErrorCode::kProgramOverrun);
  EXPECT_EQ(overrun.fault_pc, kProgramAddress + 64);
  EXPECT_EQ(overrun.retired, 2u);

  GoldenModel empty(LoadConfig("tiny"));
  EXPECT_EQ(empty.Execute(kProgramAddress, 0).error, ErrorCode::kProgramOverrun);

  GoldenModel fetch(LoadConfig("tiny"));
  const std::uint64_t end = std::uint64_t{1} << 20;
  const isa::Word sync = isa::EncodeOrThrow(Sync());
  fetch.WriteMemory(end - 32, sync);
  const LaunchResult off_the_end = fetch.Execute(end - 32, 5);  // SYNC, then past the end
  EXPECT_EQ(off_the_end.error, ErrorCode::kDramRange);
  EXPECT_EQ(off_the_end.fault_pc, end);
  EXPECT_EQ(fetch.Execute(~std::uint64_t{0} - 31, 5).error, ErrorCode::kDramRange);  // would wrap
  EXPECT_EQ(Register(fetch, "FAULT_PC_LO"), end);  // the first error sticks until cleared
}

TEST(Errors, MisalignedProgramCounterFaultsBeforeFetching) {
  // docs/ISA.md: instructions sit on 32-byte boundaries; CMD_PC must be a multiple of 32.
  GoldenModel model(LoadConfig("tiny"));
  const isa::Word halt = isa::EncodeOrThrow(Halt());
  model.WriteMemory(kProgramAddress + 16, halt);
  const LaunchResult result = model.Execute(kProgramAddress + 16, 1);
  EXPECT_EQ(result.error, ErrorCode::kMisaligned);
  EXPECT_EQ(result.fault_pc, kProgramAddress + 16);
  EXPECT_EQ(result.retired, 0u);
  EXPECT_EQ(model.Execute((std::uint64_t{1} << 20) - 16, 1).error, ErrorCode::kMisaligned)
      << "alignment is checked before the range";
}

TEST(Errors, ZeroedMemoryFaultsAtOnce) {
  GoldenModel model(LoadConfig("small"));
  const LaunchResult result = model.Execute(0x4000, 100);
  EXPECT_EQ(result.error, ErrorCode::kIllegalOpcode);
  EXPECT_EQ(result.fault_pc, 0x4000u);
  EXPECT_EQ(result.retired, 0u);
}

TEST(Errors, RandomWordsNeverCrashOrEscape) {
  // Whatever the program, the model stays inside its buffers (ASan checks this build-wide).
  std::mt19937_64 rng(TestSeed());
  GoldenModel model(LoadConfig("tiny"));
  for (std::uint32_t trial = 0; trial < 300; ++trial) {
    std::vector<std::uint8_t> program(32 * 8);
    for (std::size_t i = 0; i < program.size(); ++i) program[i] = static_cast<std::uint8_t>(rng());
    for (std::size_t insn = 0; insn < 8; ++insn) {
      program[insn * 32] = static_cast<std::uint8_t>(1 + rng() % 10);  // a defined opcode
      if (rng() % 2 == 0) {
        // Clear the high half so that more instructions pass decoding and reach the units.
        for (std::size_t b = 16; b < 32; ++b) program[insn * 32 + b] &= static_cast<std::uint8_t>(rng());
      }
    }
    model.WriteMemory(kProgramAddress, program);
    model.Execute(kProgramAddress, 8);
    SetRegister(model, "CTRL", 0x4);
  }
}

}  // namespace
}  // namespace systole::model
