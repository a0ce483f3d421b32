// Vetting a launch a slice at a time: see vetting.hpp.
#include "driver/server/vetting.hpp"

#include <algorithm>

namespace systole::server {

namespace {
constexpr std::uint64_t kWordsPerRead = 4096;
}  // namespace

bool Vetting::Step(Link& device, const RangeMap& allocations, const Config& config,
                   std::uint64_t words) {
  while (!done_ && words > 0) {
    if (next_ == launch_.count) {  // no HALT: the device faults PROGRAM_OVERRUN after them
      Finish(next_);
      break;
    }
    const std::uint64_t address = launch_.pc + next_ * isa::kInstructionBytes;
    if (!Covers(allocations, address, isa::kInstructionBytes)) {
      Refuse(regs::ErrorCode::kDramRange, next_);  // the fetch itself leaves its memory
      break;
    }
    std::uint64_t n = 1;
    while (n < std::min(words, kWordsPerRead) && next_ + n < launch_.count &&
           Covers(allocations, address + n * isa::kInstructionBytes, isa::kInstructionBytes)) {
      ++n;
    }
    words -= n;
    bytes_.resize(n * isa::kInstructionBytes);
    device.ReadMemory(address, bytes_);
    for (std::uint64_t i = 0; i < n && !done_; ++i, ++next_) {
      isa::Word word;
      std::copy_n(bytes_.begin() + static_cast<std::ptrdiff_t>(i * isa::kInstructionBytes),
                  isa::kInstructionBytes, word.begin());
      isa::Instruction insn;
      // The sequencer faults (with no effect) at a word that does not decode, and stops at HALT.
      if (isa::Decode(word, insn)) {
        Finish(next_ + 1);
        break;
      }
      if (auto range = DmaRangeOf(insn, config)) {
        range->instruction = next_;
        if (!Covers(allocations, range->address, range->bytes)) {
          Refuse(OperandFault(insn, config).value_or(regs::ErrorCode::kDramRange), next_);
          break;
        }
        ranges_.push_back(*range);
        operand_faults_.push_back(OperandFault(insn, config));
      }
      if (insn.opcode == isa::Opcode::kHalt) {
        Finish(next_ + 1);
        break;
      }
    }
  }
  return done_;
}

void Vetting::Refuse(regs::ErrorCode error, std::uint64_t index) {
  refusal_.emplace(error, launch_.pc + index * isa::kInstructionBytes);
  Finish(index);
}

void Vetting::Finish(std::uint64_t text_words) {
  done_ = true;
  runnable_ = static_cast<std::uint32_t>(refusal_ ? text_words : launch_.count);
  // A STORE over an instruction that runs could change it after it was vetted.
  const std::uint64_t text_end = launch_.pc + text_words * isa::kInstructionBytes;
  for (std::size_t i = 0; i < ranges_.size(); ++i) {
    const TouchedRange& range = ranges_[i];
    if (range.written && range.address < text_end && range.address + range.bytes > launch_.pc) {
      refusal_.emplace(operand_faults_[i].value_or(regs::ErrorCode::kDramRange),
                       launch_.pc + range.instruction * isa::kInstructionBytes);
      runnable_ = static_cast<std::uint32_t>(range.instruction);
      ranges_.resize(i);
      break;
    }
  }
}

}  // namespace systole::server
