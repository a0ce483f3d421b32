#include "arch/config/config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <toml++/toml.h>

namespace systole {

std::string_view DTypeName(DType dtype) { return dtype == DType::kInt8 ? "int8" : "bf16"; }

unsigned ElementBytes(DType dtype) { return dtype == DType::kInt8 ? 1u : 2u; }

namespace {

[[noreturn]] void Fail(std::string_view where, std::string_view field, std::uint64_t value,
                       std::string_view why) {
  throw ConfigError(fmt::format("{}: {} = {}: {}", where, field, value, why));
}

void RequireRange(std::string_view where, std::string_view field, std::uint64_t value,
                  std::uint64_t lo, std::uint64_t hi) {
  if (value < lo || value > hi) {
    Fail(where, field, value, fmt::format("must be between {} and {}", lo, hi));
  }
}

void RequirePowerOfTwo(std::string_view where, std::string_view field, std::uint64_t value) {
  if (!std::has_single_bit(value)) Fail(where, field, value, "must be a power of two");
}

// Reads an integer field; a missing or non-integer field is an error naming it.
std::uint64_t ReadInt(const toml::table& root, std::string_view section, std::string_view key,
                      std::string_view origin) {
  const std::string field = fmt::format("{}.{}", section, key);
  const toml::node* node = root.at_path(field).node();
  if (node == nullptr) throw ConfigError(fmt::format("{}: {} is missing", origin, field));
  const auto* value = node->as_integer();
  if (value == nullptr) {
    throw ConfigError(fmt::format("{}:{}:{}: {} must be an integer", origin,
                                  node->source().begin.line, node->source().begin.column, field));
  }
  if (value->get() < 0) {
    throw ConfigError(fmt::format("{}:{}:{}: {} = {}: must not be negative", origin,
                                  node->source().begin.line, node->source().begin.column, field,
                                  value->get()));
  }
  return static_cast<std::uint64_t>(value->get());
}

std::uint32_t ReadInt32(const toml::table& root, std::string_view section, std::string_view key,
                        std::string_view origin) {
  const std::uint64_t value = ReadInt(root, section, key, origin);
  if (value > UINT32_MAX) {
    Fail(origin, fmt::format("{}.{}", section, key), value, "does not fit in 32 bits");
  }
  return static_cast<std::uint32_t>(value);
}

// The [dram] fields: name, member, legal range. One table drives parsing and validation.
struct DramField {
  std::string_view key;
  std::uint32_t DramConfig::*member;
  std::uint32_t lo, hi;
};
// Timing limits: the RTL keeps every constraint in a 16-bit down-counter.
constexpr DramField kDramFields[] = {
    {"bank_groups", &DramConfig::bank_groups, 1, 16},
    {"banks_per_group", &DramConfig::banks_per_group, 1, 16},
    {"row_bytes", &DramConfig::row_bytes, 64, 16384},
    {"t_burst", &DramConfig::t_burst, 1, 16},
    {"t_rcd", &DramConfig::t_rcd, 1, 255},
    {"t_rp", &DramConfig::t_rp, 1, 255},
    {"t_ras", &DramConfig::t_ras, 1, 255},
    {"t_cl", &DramConfig::t_cl, 1, 255},
    {"t_wl", &DramConfig::t_wl, 1, 255},
    {"t_wr", &DramConfig::t_wr, 1, 255},
    {"t_rtp", &DramConfig::t_rtp, 1, 255},
    {"t_rrd_s", &DramConfig::t_rrd_s, 1, 255},
    {"t_rrd_l", &DramConfig::t_rrd_l, 1, 255},
    {"t_faw", &DramConfig::t_faw, 1, 1023},
    {"t_ccd_s", &DramConfig::t_ccd_s, 1, 255},
    {"t_ccd_l", &DramConfig::t_ccd_l, 1, 255},
    {"t_wtr", &DramConfig::t_wtr, 1, 255},
    {"t_rtw", &DramConfig::t_rtw, 1, 255},
    {"t_refi", &DramConfig::t_refi, 16, 65535},
    {"t_rfc", &DramConfig::t_rfc, 1, 4095},
    {"starvation_cycles", &DramConfig::starvation_cycles, 1, 65535},
};

void ValidateDram(std::string_view where, const Config& config) {
  const DramConfig& dram = config.dram;
  for (const DramField& field : kDramFields) {
    RequireRange(where, fmt::format("dram.{}", field.key), dram.*field.member, field.lo, field.hi);
  }
  RequirePowerOfTwo(where, "dram.bank_groups", dram.bank_groups);
  RequirePowerOfTwo(where, "dram.banks_per_group", dram.banks_per_group);
  RequirePowerOfTwo(where, "dram.row_bytes", dram.row_bytes);
  // Relations JEDEC devices always satisfy; a controller built on them relies on them.
  auto at_least = [&](std::string_view field, std::uint32_t value, std::string_view other,
                      std::uint32_t bound) {
    if (value < bound) Fail(where, field, value, fmt::format("must be at least {} ({})", other, bound));
  };
  at_least("dram.t_ras", dram.t_ras, "dram.t_rcd", dram.t_rcd);
  at_least("dram.t_ccd_s", dram.t_ccd_s, "dram.t_burst", dram.t_burst);
  at_least("dram.t_ccd_l", dram.t_ccd_l, "dram.t_ccd_s", dram.t_ccd_s);
  at_least("dram.t_rrd_l", dram.t_rrd_l, "dram.t_rrd_s", dram.t_rrd_s);
  if (dram.t_rfc >= dram.t_refi) {
    Fail(where, "dram.t_rfc", dram.t_rfc, fmt::format("must be less than dram.t_refi ({})", dram.t_refi));
  }
  if (config.DramRowsPerBank() < 1) {
    Fail(where, "memory.bytes", config.memory_bytes,
         fmt::format("gives each of the {} channels less than one row in each of its {} banks "
                     "of {}-byte pages",
                     config.memory_channels, dram.Banks(), dram.row_bytes));
  }
}

}  // namespace

void Config::Validate(std::string_view where) const {
  // Hardware limits come from the ISA's field widths (docs/ISA.md): buffer rows are 24-bit,
  // counts are 16-bit, device addresses are 48-bit.
  if (name.empty()) throw ConfigError(fmt::format("{}: name is missing", where));
  // The name is reported through the four CFG_NAME registers: 16 bytes at most.
  if (name.size() > 16) {
    throw ConfigError(fmt::format("{}: name = \"{}\": must be at most 16 characters", where, name));
  }
  RequireRange(where, "array.rows", rows, 1, 1024);
  RequireRange(where, "array.cols", cols, 1, 1024);
  const std::uint64_t ub_row = UbRowBytes();
  const std::uint64_t acc_row = AccRowBytes();
  if (unified_buffer_bytes % ub_row != 0) {
    Fail(where, "buffers.unified_buffer_bytes", unified_buffer_bytes,
         fmt::format("must be a whole number of {}-byte rows", ub_row));
  }
  if (UbRows() < std::max(rows, cols)) {
    Fail(where, "buffers.unified_buffer_bytes", unified_buffer_bytes,
         fmt::format("too small for one tile ({} rows of {} bytes)", std::max(rows, cols), ub_row));
  }
  RequireRange(where, "unified buffer rows", UbRows(), 1, (1ull << 24));
  if (accumulator_bytes % acc_row != 0) {
    Fail(where, "buffers.accumulator_bytes", accumulator_bytes,
         fmt::format("must be a whole number of {}-byte rows", acc_row));
  }
  if (AccRows() < rows) {
    Fail(where, "buffers.accumulator_bytes", accumulator_bytes,
         fmt::format("too small for one tile ({} rows of {} bytes)", rows, acc_row));
  }
  RequireRange(where, "accumulator rows", AccRows(), 1, (1ull << 24));
  RequireRange(where, "buffers.weight_fifo_tiles", weight_fifo_tiles, 1, 64);
  RequireRange(where, "memory.bytes", memory_bytes, 1ull << 15, 1ull << 48);
  RequirePowerOfTwo(where, "memory.bytes", memory_bytes);
  RequireRange(where, "memory.channels", memory_channels, 1, 64);
  RequirePowerOfTwo(where, "memory.channels", memory_channels);
  RequireRange(where, "memory.interleave_bytes", interleave_bytes, 32, 1u << 20);
  RequirePowerOfTwo(where, "memory.interleave_bytes", interleave_bytes);
  if (std::uint64_t{interleave_bytes} * memory_channels > memory_bytes) {
    Fail(where, "memory.interleave_bytes", interleave_bytes,
         "times memory.channels exceeds memory.bytes");
  }
  ValidateDram(where, *this);
  RequireRange(where, "queues.command_queue_depth", command_queue_depth, 1, 255);
  RequireRange(where, "queues.token_capacity", token_capacity, 1, 255);
  RequireRange(where, "queues.load_credits", load_credits, 2, 128);
  RequirePowerOfTwo(where, "queues.load_credits", load_credits);
  RequireRange(where, "clock.mhz", clock_mhz, 1, 10000);
}

Config ParseConfig(std::string_view toml_text, std::string_view origin) {
  toml::table root;
  try {
    root = toml::parse(toml_text, origin);
  } catch (const toml::parse_error& error) {
    throw ConfigError(fmt::format("{}:{}:{}: {}", origin, error.source().begin.line,
                                  error.source().begin.column, error.description()));
  }
  Config config;
  config.name = root["name"].value_or(std::string{});
  config.description = root["description"].value_or(std::string{});
  config.rows = ReadInt32(root, "array", "rows", origin);
  config.cols = ReadInt32(root, "array", "cols", origin);
  const std::string dtype = root["array"]["dtype"].value_or(std::string{});
  if (dtype == "int8") {
    config.dtype = DType::kInt8;
  } else if (dtype == "bf16") {
    config.dtype = DType::kBf16;
  } else {
    throw ConfigError(
        fmt::format("{}: array.dtype = \"{}\": must be \"int8\" or \"bf16\"", origin, dtype));
  }
  config.unified_buffer_bytes = ReadInt(root, "buffers", "unified_buffer_bytes", origin);
  config.accumulator_bytes = ReadInt(root, "buffers", "accumulator_bytes", origin);
  config.weight_fifo_tiles = ReadInt32(root, "buffers", "weight_fifo_tiles", origin);
  config.memory_bytes = ReadInt(root, "memory", "bytes", origin);
  config.memory_channels = ReadInt32(root, "memory", "channels", origin);
  config.interleave_bytes = ReadInt32(root, "memory", "interleave_bytes", origin);
  // [dram] is optional, and so is each of its fields: absent ones keep the HBM2-like defaults.
  if (const toml::node* dram = root.get("dram"); dram != nullptr) {
    if (!dram->is_table()) throw ConfigError(fmt::format("{}: dram must be a table", origin));
    for (auto&& [key, value] : *dram->as_table()) {
      // A named copy: clang 14 cannot capture a structured binding in a lambda.
      const std::string_view name = key.str();
      const auto known = std::find_if(std::begin(kDramFields), std::end(kDramFields),
                                      [&](const DramField& f) { return f.key == name; });
      if (known == std::end(kDramFields)) {
        throw ConfigError(fmt::format("{}:{}:{}: dram.{}: unknown field", origin,
                                      key.source().begin.line, key.source().begin.column,
                                      key.str()));
      }
      config.dram.*known->member = ReadInt32(root, "dram", key.str(), origin);
    }
  }
  config.command_queue_depth = ReadInt32(root, "queues", "command_queue_depth", origin);
  config.token_capacity = ReadInt32(root, "queues", "token_capacity", origin);
  if (const toml::table* queues = root["queues"].as_table(); queues != nullptr && queues->contains("load_credits")) {
    config.load_credits = ReadInt32(root, "queues", "load_credits", origin);
  }
  config.clock_mhz = ReadInt32(root, "clock", "mhz", origin);
  config.Validate(origin);
  return config;
}

Config LoadConfigFile(const std::filesystem::path& path) {
  // A regular file of bounded size: /dev/zero would be read until memory runs out, /dev/stdin
  // would wait for input, and no configuration is anywhere near this long.
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    throw ConfigError(fmt::format("{}: {}", path.string(),
                                  std::filesystem::exists(path, error) ? "not a regular file" : "cannot open"));
  }
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  if (error || size > kMaxConfigFileBytes) {
    throw ConfigError(fmt::format("{}: {} bytes is not a configuration (at most {})", path.string(),
                                  error ? 0 : size, kMaxConfigFileBytes));
  }
  std::string text;
  {
    std::FILE* file = std::fopen(path.c_str(), "rb");
    if (file == nullptr) throw ConfigError(fmt::format("{}: cannot open", path.string()));
    char buffer[4096];
    std::size_t n = 0;
    // Bounded again: the file may have grown since its size was read.
    while (text.size() <= kMaxConfigFileBytes && (n = std::fread(buffer, 1, sizeof buffer, file)) > 0) {
      text.append(buffer, n);
    }
    std::fclose(file);
  }
  if (text.size() > kMaxConfigFileBytes) {
    throw ConfigError(fmt::format("{}: longer than {} bytes", path.string(), kMaxConfigFileBytes));
  }
  return ParseConfig(text, path.string());
}

bool IsConfigName(std::string_view name) {
  return !name.empty() && name.size() <= 16 && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
  });
}

std::filesystem::path ConfigDirectory() {
  if (const char* dir = std::getenv("SYSTOLE_CONFIG_DIR"); dir != nullptr && *dir != '\0') {
    return dir;
  }
  return std::filesystem::path(SYSTOLE_DEFAULT_CONFIG_DIR);
}

Config LoadConfig(std::string_view name) {
  if (!IsConfigName(name)) {
    // Printed with escapes: the name may come from a hostile file.
    throw ConfigError(fmt::format("configuration name {:?} is not a name (up to 16 letters, digits, '-' or '_'); "
                                  "a configuration file is given by its path on the command line (--config FILE.toml)",
                                  name));
  }
  const std::filesystem::path path = ConfigDirectory() / (std::string(name) + ".toml");
  std::error_code error;
  if (!std::filesystem::exists(path, error)) {
    std::string known;
    for (const auto& known_name : ListConfigs()) known += (known.empty() ? "" : ", ") + known_name;
    throw ConfigError(fmt::format("unknown configuration '{}' (known: {}; a configuration file is given by its "
                                  "path: --config FILE.toml)", name, known));
  }
  Config config = LoadConfigFile(path);
  if (config.name != name) {
    throw ConfigError(fmt::format("{}: name = \"{}\" does not match the file name '{}'",
                                  path.string(), config.name, name));
  }
  return config;
}

Config LoadConfigNameOrFile(std::string_view name_or_path) {
  const bool is_path = name_or_path.find('/') != std::string_view::npos || name_or_path.ends_with(".toml");
  return is_path ? LoadConfigFile(std::filesystem::path(name_or_path)) : LoadConfig(name_or_path);
}

std::vector<std::string> ListConfigs() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(ConfigDirectory(), ec)) {
    if (entry.path().extension() == ".toml") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace systole
