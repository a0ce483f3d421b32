// Systole's named configurations: the one description of a machine that the RTL parameters,
// the C++ models, the compiler's target and the device's identity registers all derive from.
//
// A configuration is a TOML file in configs/ (see docs/CONFIG.md). Load one by name with
// LoadConfig("small") or by path with LoadConfigFile("configs/small.toml").
#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace systole {

// Element type of the MXU operands and the unified buffer.
enum class DType : std::uint8_t {
  kInt8 = 0,  // int8 x int8 -> int32 accumulators (TPUv1)
  kBf16 = 1,  // bf16 x bf16 -> fp32 accumulators (TPUv2 and later)
};

std::string_view DTypeName(DType dtype);
// Bytes of one unified-buffer / weight element: 1 for int8, 2 for bf16.
unsigned ElementBytes(DType dtype);
// Bytes of one accumulator element: 4 (int32 or fp32).
inline constexpr unsigned kAccumulatorElementBytes = 4;

// Thrown for a configuration that cannot be loaded or is not a legal machine. The message
// names the file and the field, e.g. "configs/x.toml: array.rows = 0: must be at least 1".
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Config {
  std::string name;
  std::string description;

  // [array]
  std::uint32_t rows = 0;  // MXU rows R: reduction depth of a weight tile
  std::uint32_t cols = 0;  // MXU columns C: outputs per input row
  DType dtype = DType::kBf16;

  // [buffers]
  std::uint64_t unified_buffer_bytes = 0;
  std::uint64_t accumulator_bytes = 0;
  std::uint32_t weight_fifo_tiles = 0;

  // [memory]
  std::uint64_t memory_bytes = 0;
  std::uint32_t memory_channels = 0;
  std::uint32_t interleave_bytes = 0;

  // [queues]
  std::uint32_t command_queue_depth = 0;
  std::uint32_t token_capacity = 0;

  // [clock]
  std::uint32_t clock_mhz = 0;

  // Derived geometry ------------------------------------------------------------------------
  // Elements in one unified-buffer row: max(R, C). MATMUL reads the first R, ACTIVATE writes
  // the first C (and zeroes the rest), so non-square arrays need no special cases.
  std::uint32_t UbRowElems() const { return rows > cols ? rows : cols; }
  std::uint32_t UbRowBytes() const { return UbRowElems() * ElementBytes(dtype); }
  std::uint64_t UbRows() const { return unified_buffer_bytes / UbRowBytes(); }
  // Elements in one accumulator row: C.
  std::uint32_t AccRowElems() const { return cols; }
  std::uint32_t AccRowBytes() const { return cols * kAccumulatorElementBytes; }
  std::uint64_t AccRows() const { return accumulator_bytes / AccRowBytes(); }
  std::uint64_t WeightTileBytes() const { return std::uint64_t{rows} * cols * ElementBytes(dtype); }
  std::uint64_t PeakMacsPerCycle() const { return std::uint64_t{rows} * cols; }

  // Throws ConfigError naming the first illegal field. `where` prefixes the message.
  void Validate(std::string_view where = "config") const;

  bool operator==(const Config&) const = default;
};

// Parses TOML text. `origin` names the source in error messages (a path, or "<string>").
Config ParseConfig(std::string_view toml_text, std::string_view origin = "<string>");
Config LoadConfigFile(const std::filesystem::path& path);

// Directory searched by LoadConfig: $SYSTOLE_CONFIG_DIR if set, else the source tree's configs/.
std::filesystem::path ConfigDirectory();
// Loads a configuration by name ("small") or by path (anything containing '/' or ending .toml).
Config LoadConfig(std::string_view name_or_path);
// Names of the shipped configurations, sorted.
std::vector<std::string> ListConfigs();

inline constexpr std::string_view kDefaultConfig = "small";

}  // namespace systole
