// Systole's named configurations: the one description of a machine that the RTL parameters,
// the C++ models, the compiler's target and the device's identity registers all derive from.
//
// A configuration is a TOML file in configs/ (see docs/CONFIG.md). Load one by name with
// LoadConfig("small"), by path with LoadConfigFile("configs/small.toml"), or from a command-line
// argument that may be either with LoadConfigNameOrFile.
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

// [dram] — the DRAM behind every memory channel: geometry and JEDEC-style timing, all in
// controller clock cycles (the controller issues at most one command per channel per cycle).
// The section is optional; every field defaults to the HBM2-like values below (a 1 GHz command
// clock, 2 Gb dies), so a configuration that says nothing still gets a real memory system.
// The RTL controller takes the timing as inputs (like a board controller's timing registers),
// the geometry as parameters; sim/dram checks every command against these rules.
struct DramConfig {
  // Geometry of one channel. A column access moves one 32-byte word (a burst).
  std::uint32_t bank_groups = 4;
  std::uint32_t banks_per_group = 4;
  std::uint32_t row_bytes = 1024;  // page size: bytes one ACTIVATE opens in one bank
  // Timing, cycles.
  std::uint32_t t_burst = 2;   // data-bus cycles of one 32-byte burst
  std::uint32_t t_rcd = 14;    // ACT -> RD/WR, same bank
  std::uint32_t t_rp = 14;     // PRE -> ACT, same bank
  std::uint32_t t_ras = 33;    // ACT -> PRE, same bank
  std::uint32_t t_cl = 14;     // RD -> first data
  std::uint32_t t_wl = 4;      // WR -> first data
  std::uint32_t t_wr = 16;     // end of write data -> PRE, same bank
  std::uint32_t t_rtp = 5;     // RD -> PRE, same bank
  std::uint32_t t_rrd_s = 4;   // ACT -> ACT, different bank groups
  std::uint32_t t_rrd_l = 6;   // ACT -> ACT, same bank group
  std::uint32_t t_faw = 20;    // at most four ACTs in any window of this many cycles
  std::uint32_t t_ccd_s = 2;   // RD/WR -> RD/WR, different bank groups
  std::uint32_t t_ccd_l = 4;   // RD/WR -> RD/WR, same bank group
  std::uint32_t t_wtr = 8;     // end of write data -> RD
  std::uint32_t t_rtw = 14;    // RD -> WR (bus turnaround)
  std::uint32_t t_refi = 3900; // average interval between REFRESH commands
  std::uint32_t t_rfc = 160;   // REFRESH -> any ACT or REFRESH
  // The controller serves the oldest request alone once it has waited this long (FR-FCFS
  // starvation bound).
  std::uint32_t starvation_cycles = 256;

  std::uint32_t Banks() const { return bank_groups * banks_per_group; }
  // Cycles from a WR command until its bank may be precharged / a RD may follow.
  std::uint32_t WriteToPrecharge() const { return t_wl + t_burst + t_wr; }
  std::uint32_t WriteToRead() const { return t_wl + t_burst + t_wtr; }
  bool operator==(const DramConfig&) const = default;
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

  // [dram]
  DramConfig dram;

  // [queues]
  std::uint32_t command_queue_depth = 0;
  std::uint32_t token_capacity = 0;
  // 32-byte words a LOAD keeps requested or buffered (the LOAD row reader's credits, a power of
  // two from 2 to 128; optional, 16): a stream of short rows moves at most this many words per
  // memory round trip, and each costs 32 bytes of response FIFO in the RTL.
  std::uint32_t load_credits = 16;

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
  std::uint64_t ChannelBytes() const { return memory_bytes / memory_channels; }
  // Rows of one bank: what is left of a channel after banks and pages.
  std::uint64_t DramRowsPerBank() const {
    return ChannelBytes() / (std::uint64_t{dram.Banks()} * dram.row_bytes);
  }

  // Throws ConfigError naming the first illegal field. `where` prefixes the message.
  void Validate(std::string_view where = "config") const;

  bool operator==(const Config&) const = default;
};

// Parses TOML text. `origin` names the source in error messages (a path, or "<string>").
Config ParseConfig(std::string_view toml_text, std::string_view origin = "<string>");
// A regular file of at most kMaxConfigFileBytes (never a device, a pipe or a directory).
Config LoadConfigFile(const std::filesystem::path& path);
inline constexpr std::uint64_t kMaxConfigFileBytes = 1 << 20;

// Directory searched by LoadConfig: $SYSTOLE_CONFIG_DIR if set, else the source tree's configs/.
std::filesystem::path ConfigDirectory();
// A configuration name: 1 to 16 of [A-Za-z0-9_-] (so never a path).
bool IsConfigName(std::string_view name);
// Loads a named configuration ("small") from ConfigDirectory(), and nothing else: the name may
// come from a program, a bundle or a model file, which must not make a tool read /dev/zero or
// any other file as TOML.
Config LoadConfig(std::string_view name);
// For what a person typed (--config, a Python argument): a path when it contains '/' or ends
// in .toml, else a name. Never give it a name read from a file.
Config LoadConfigNameOrFile(std::string_view name_or_path);
// Names of the shipped configurations, sorted.
std::vector<std::string> ListConfigs();

inline constexpr std::string_view kDefaultConfig = "small";

}  // namespace systole
