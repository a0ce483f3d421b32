// The sequencer: fetch, decode, check and dispatch, in program order.
//
// Every check of docs/ISA.md runs before the instruction has any effect, so a faulting
// instruction and everything after it do nothing (precise faults). The order of the checks is
// fixed, because the RTL must report the same error when one instruction breaks several rules:
//   1. decoding (ILLEGAL_OPCODE, RESERVED_BITS, ILLEGAL_FIELD), by isa::Decode;
//   2. the operands against the configuration, in the order docs/ISA.md lists them for the
//      opcode (MISALIGNED, SHAPE, UB_RANGE/ACC_RANGE, DRAM_RANGE, ...), in dma.cpp, mxu.cpp and
//      vector_unit.cpp;
//   3. the weight FIFO (WFIFO_UNDERFLOW, WFIFO_OVERFLOW, NO_WEIGHTS);
//   4. tokens: waits (TOKEN_UNDERFLOW), then signals (TOKEN_OVERFLOW).
#include <fmt/format.h>

#include "sim/model/golden_model.hpp"

namespace systole::model {

using isa::Field;
using isa::Opcode;
using regs::ErrorCode;

namespace {

unsigned UnitOf(Opcode opcode) {
  return static_cast<unsigned>(isa::FindOpcode(static_cast<std::uint8_t>(opcode))->unit);
}
}  // namespace

LaunchResult GoldenModel::Execute(std::uint64_t pc, std::uint32_t count) {
  BeginLaunch(pc, count);
  while (!StepLaunch()) {
  }
  return launch_.result;
}

void GoldenModel::BeginLaunch(std::uint64_t pc, std::uint32_t count) {
  launch_ = LaunchState{};
  launch_.active = true;
  launch_.pc = pc;
  launch_.count = count;
  timing_.StartLaunch(pc);
}

bool GoldenModel::StepLaunch() {
  LaunchResult& result = launch_.result;
  const std::uint64_t index = launch_.next++;
  // pc < 2^48 for the first fetch to succeed, so this sum cannot wrap before a fault.
  const std::uint64_t insn_pc = launch_.pc + index * isa::kInstructionBytes;
  isa::Instruction insn;
  std::optional<Fault> fault;
  if (insn_pc % isa::kInstructionBytes != 0) {
    fault = Fault{ErrorCode::kMisaligned,
                  fmt::format("program counter is not a multiple of {}", isa::kInstructionBytes)};
  } else if (index == launch_.count) {
    fault = Fault{ErrorCode::kProgramOverrun,
                  fmt::format("{} instructions executed without HALT", launch_.count)};
  } else if (!memory_.Contains(insn_pc, isa::kInstructionBytes)) {
    fault = Fault{ErrorCode::kDramRange, "instruction fetch outside device memory"};
  } else {
    isa::Word word;
    memory_.Read(insn_pc, word);
    if (auto error = isa::Decode(word, insn)) {
      fault = Fault{static_cast<ErrorCode>(error->code), std::move(error->message)};
    } else {
      fault = Check(insn);
    }
  }
  bool ended = false;
  if (fault) {
    result.error = fault->code;
    result.fault_pc = insn_pc;
    result.message = fmt::format("pc 0x{:x}: {}: {}", insn_pc, regs::ErrorName(fault->code),
                                 fault->message);
    RaiseError(fault->code, insn_pc, result.message);
    ended = true;
  } else {
    Dispatch(insn);
    ++result.retired;
    ++Count(Perf::kInsns);
    if (insn.opcode == Opcode::kHalt) {
      registers_.LaunchDone();
      ended = true;
    }
  }
  if (ended) {
    timing_.EndLaunch(registers_.counters());
    Count(Perf::kCycles) += timing_.LaunchCycles();
    cycles_run_ += timing_.LaunchCycles();
    launch_.active = false;
  }
  return ended;
}

std::optional<GoldenModel::Fault> GoldenModel::Check(const isa::Instruction& insn) const {
  std::optional<Fault> fault;
  switch (insn.opcode) {
    case Opcode::kLoad:
    case Opcode::kStore: fault = CheckDma(insn); break;
    case Opcode::kLoadWeights: fault = CheckLoadWeights(insn); break;
    case Opcode::kMatmul: fault = CheckMatmul(insn); break;
    case Opcode::kActivate: fault = CheckActivate(insn); break;
    case Opcode::kVector: fault = CheckVector(insn); break;
    case Opcode::kPool: fault = CheckPool(insn); break;
    case Opcode::kReduce: fault = CheckReduce(insn); break;
    case Opcode::kAccVec: fault = CheckAccVec(insn); break;
    case Opcode::kSync:
    case Opcode::kInterrupt:
    case Opcode::kHalt: break;
  }
  if (fault) return fault;
  return CheckFlowControl(insn);
}

// The model has executed every earlier instruction, so the FIFO and the token counters hold
// exactly "earlier pushes minus earlier pops" and "earlier signals minus earlier waits".
std::optional<GoldenModel::Fault> GoldenModel::CheckFlowControl(
    const isa::Instruction& insn) const {
  if (insn.opcode == Opcode::kMatmul) {
    if (insn[Field::kPop] != 0 && launch_.weight_fifo.empty()) {
      return Fault{ErrorCode::kWfifoUnderflow, "matmul pops a tile no earlier load_weights pushed"};
    }
    if (insn[Field::kPop] == 0 && !launch_.stationary) {
      return Fault{ErrorCode::kNoWeights, "matmul without pop before any tile is stationary"};
    }
  }
  if (insn.opcode == Opcode::kLoadWeights &&
      launch_.weight_fifo.size() >= config_.weight_fifo_tiles) {
    return Fault{ErrorCode::kWfifoOverflow,
                 fmt::format("load_weights: {} tiles already wait in a FIFO of {}",
                             launch_.weight_fifo.size(), config_.weight_fifo_tiles)};
  }
  const isa::OpcodeSpec& spec = *isa::FindOpcode(static_cast<std::uint8_t>(insn.opcode));
  if (spec.unit == isa::Unit::kSequencer) return std::nullopt;
  const unsigned self = static_cast<unsigned>(spec.unit);
  for (unsigned producer = 0; producer < isa::kNumUnits; ++producer) {
    if ((insn.wait >> producer & 1u) != 0 && launch_.tokens[producer][self] == 0) {
      return Fault{ErrorCode::kTokenUnderflow,
                   fmt::format("{} waits for a token from {} that no earlier instruction sends",
                               spec.mnemonic, isa::UnitName(static_cast<isa::Unit>(producer)))};
    }
  }
  for (unsigned consumer = 0; consumer < isa::kNumUnits; ++consumer) {
    if ((insn.signal >> consumer & 1u) != 0 &&
        launch_.tokens[self][consumer] >= config_.token_capacity) {
      return Fault{ErrorCode::kTokenOverflow,
                   fmt::format("{} signals {}, which already holds {} tokens from {}",
                               spec.mnemonic, isa::UnitName(static_cast<isa::Unit>(consumer)),
                               launch_.tokens[self][consumer], isa::UnitName(spec.unit))};
    }
  }
  return std::nullopt;
}

void GoldenModel::Dispatch(const isa::Instruction& insn) {
  switch (insn.opcode) {
    case Opcode::kLoad: ExecuteLoad(insn); break;
    case Opcode::kStore: ExecuteStore(insn); break;
    case Opcode::kLoadWeights: ExecuteLoadWeights(insn); break;
    case Opcode::kMatmul: ExecuteMatmul(insn); break;
    case Opcode::kActivate: ExecuteActivate(insn); break;
    case Opcode::kVector: ExecuteVector(insn); break;
    case Opcode::kPool: ExecutePool(insn); break;
    case Opcode::kReduce: ExecuteReduce(insn); break;
    case Opcode::kAccVec: ExecuteAccVec(insn); break;
    case Opcode::kInterrupt:
      registers_.UserInterrupt(static_cast<std::uint32_t>(insn[Field::kCode]));
      break;
    case Opcode::kSync:
    case Opcode::kHalt: break;  // waiting for the units is a matter of timing only
  }
  if (insn.wait != 0 || insn.signal != 0) {
    const unsigned self = UnitOf(insn.opcode);
    for (unsigned unit = 0; unit < isa::kNumUnits; ++unit) {
      if ((insn.wait >> unit & 1u) != 0) --launch_.tokens[unit][self];
      if ((insn.signal >> unit & 1u) != 0) ++launch_.tokens[self][unit];
    }
  }
  timing_.Schedule(insn, registers_.counters());
}

}  // namespace systole::model
