#include "arch/regs/identity.hpp"

#include <fmt/format.h>

#include <bit>

#include "arch/isa/isa.hpp"
#include "arch/regs/regmap.hpp"

namespace systole::regs {

std::vector<std::pair<std::uint32_t, std::uint32_t>> IdentityRegisters(const Config& config) {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> values = {
      {OffsetOf("ID_MAGIC"), kMagic},
      {OffsetOf("ID_VERSION"), Place(isa::kIsaVersionMajor, FieldOf("ID_VERSION", "MAJOR")) |
                                   Place(isa::kIsaVersionMinor, FieldOf("ID_VERSION", "MINOR"))},
      {OffsetOf("CFG_ARRAY"), Place(config.rows, FieldOf("CFG_ARRAY", "ROWS")) |
                                  Place(config.cols, FieldOf("CFG_ARRAY", "COLS"))},
      {OffsetOf("CFG_DTYPE"), static_cast<std::uint32_t>(config.dtype)},
      {OffsetOf("CFG_UB_ROWS"), static_cast<std::uint32_t>(config.UbRows())},
      {OffsetOf("CFG_ACC_ROWS"), static_cast<std::uint32_t>(config.AccRows())},
      {OffsetOf("CFG_QUEUES"),
       Place(config.weight_fifo_tiles, FieldOf("CFG_QUEUES", "WFIFO_TILES")) |
           Place(config.command_queue_depth, FieldOf("CFG_QUEUES", "CMDQ_DEPTH")) |
           Place(config.token_capacity, FieldOf("CFG_QUEUES", "TOKEN_CAPACITY")) |
           Place(config.load_credits, FieldOf("CFG_QUEUES", "LOAD_CREDITS"))},
      {OffsetOf("CFG_MEM_SIZE_LO"), static_cast<std::uint32_t>(config.memory_bytes)},
      {OffsetOf("CFG_MEM_SIZE_HI"), static_cast<std::uint32_t>(config.memory_bytes >> 32)},
      {OffsetOf("CFG_MEM"),
       Place(config.memory_channels, FieldOf("CFG_MEM", "CHANNELS")) |
           Place(static_cast<std::uint32_t>(std::countr_zero(config.interleave_bytes)),
                 FieldOf("CFG_MEM", "INTERLEAVE_LOG2"))},
      {OffsetOf("CFG_CLOCK_MHZ"), config.clock_mhz},
  };
  for (std::uint32_t word = 0; word < 4; ++word) {
    std::uint32_t packed = 0;
    for (std::uint32_t byte = 0; byte < 4; ++byte) {
      const std::size_t index = word * 4 + byte;
      if (index < config.name.size()) {
        packed |= std::uint32_t{static_cast<unsigned char>(config.name[index])} << (8 * byte);
      }
    }
    values.emplace_back(OffsetOf("CFG_NAME0") + 4 * word, packed);
  }
  return values;
}

Config DecodeIdentity(const std::function<std::uint32_t(std::uint32_t offset)>& read) {
  const std::uint32_t magic = read(OffsetOf("ID_MAGIC"));
  if (magic != kMagic) {
    throw ConfigError(fmt::format("ID_MAGIC = 0x{:08x}: not a Systole device (expected 0x{:08x})",
                                  magic, kMagic));
  }
  const std::uint32_t version = read(OffsetOf("ID_VERSION"));
  const std::uint32_t major = Extract(version, FieldOf("ID_VERSION", "MAJOR"));
  if (major != isa::kIsaVersionMajor) {
    throw ConfigError(fmt::format("ID_VERSION: ISA major version {} (this build speaks {})", major,
                                  isa::kIsaVersionMajor));
  }
  Config config;
  for (std::uint32_t word = 0; word < 4; ++word) {
    const std::uint32_t packed = read(OffsetOf("CFG_NAME0") + 4 * word);
    for (std::uint32_t byte = 0; byte < 4; ++byte) {
      const char c = static_cast<char>((packed >> (8 * byte)) & 0xFFu);
      if (c != '\0') config.name.push_back(c);
    }
  }
  const std::uint32_t array = read(OffsetOf("CFG_ARRAY"));
  config.rows = Extract(array, FieldOf("CFG_ARRAY", "ROWS"));
  config.cols = Extract(array, FieldOf("CFG_ARRAY", "COLS"));
  const std::uint32_t dtype = read(OffsetOf("CFG_DTYPE"));
  if (dtype > 1) throw ConfigError(fmt::format("CFG_DTYPE = {}: unknown element type", dtype));
  config.dtype = static_cast<DType>(dtype);
  config.unified_buffer_bytes = std::uint64_t{read(OffsetOf("CFG_UB_ROWS"))} * config.UbRowBytes();
  config.accumulator_bytes = std::uint64_t{read(OffsetOf("CFG_ACC_ROWS"))} * config.AccRowBytes();
  const std::uint32_t queues = read(OffsetOf("CFG_QUEUES"));
  config.weight_fifo_tiles = Extract(queues, FieldOf("CFG_QUEUES", "WFIFO_TILES"));
  config.command_queue_depth = Extract(queues, FieldOf("CFG_QUEUES", "CMDQ_DEPTH"));
  config.token_capacity = Extract(queues, FieldOf("CFG_QUEUES", "TOKEN_CAPACITY"));
  config.load_credits = Extract(queues, FieldOf("CFG_QUEUES", "LOAD_CREDITS"));
  config.memory_bytes = std::uint64_t{read(OffsetOf("CFG_MEM_SIZE_LO"))} |
                        (std::uint64_t{read(OffsetOf("CFG_MEM_SIZE_HI"))} << 32);
  const std::uint32_t mem = read(OffsetOf("CFG_MEM"));
  config.memory_channels = Extract(mem, FieldOf("CFG_MEM", "CHANNELS"));
  const std::uint32_t interleave_log2 = Extract(mem, FieldOf("CFG_MEM", "INTERLEAVE_LOG2"));
  if (interleave_log2 >= 32) {
    throw ConfigError(fmt::format("CFG_MEM.INTERLEAVE_LOG2 = {}: too large", interleave_log2));
  }
  config.interleave_bytes = 1u << interleave_log2;
  config.clock_mhz = read(OffsetOf("CFG_CLOCK_MHZ"));
  config.Validate("device identity registers");
  return config;
}

}  // namespace systole::regs
