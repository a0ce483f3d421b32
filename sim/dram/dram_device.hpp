// DramDevice: one channel of HBM2-like DRAM, as the command bus of a controller sees it.
//
// It stores the data (sparsely, per bank/row/column word) and checks every command against every
// timing and state rule of the configuration's [dram] section (arch/config/config.hpp). A broken
// rule does not stop the simulation: it is recorded as a Violation naming the cycle, the rule
// (as JEDEC names it: "tRCD", "tFAW", …) and the command, so a test can print them all.
// A command the device cannot execute (a column access to a closed bank, a row outside the
// device) is recorded and otherwise ignored: it never touches data elsewhere.
//
// Commands are issued with the cycle of the clock edge that samples them; read data is due
// t_cl cycles after its RD (DataAt). One column access moves one 32-byte word.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "arch/config/config.hpp"

namespace systole::dram {

inline constexpr unsigned kWordBytes = 32;
using Word = std::array<std::uint8_t, kWordBytes>;

// Encodings shared with rtl/memory/hbm/systole_hbm_channel.sv (its dram_cmd output).
enum class Command : std::uint8_t {
  kNone = 0,
  kActivate = 1,
  kPrecharge = 2,
  kRead = 3,
  kWrite = 4,
  kRefresh = 5,
};
const char* CommandName(Command command);

struct CommandWord {
  Command command = Command::kNone;
  std::uint32_t bank_group = 0;
  std::uint32_t bank = 0;  // within its group
  std::uint32_t row = 0;   // ACT: the row to open; RD/WR: the row the controller believes open
  std::uint32_t column = 0;  // in 32-byte words
  Word wdata{};
  std::uint32_t wstrb = 0;   // byte enables of a WR
};

struct Violation {
  std::uint64_t cycle = 0;
  std::string rule;
  std::string message;  // "cycle 123: RD bg 1 bank 2: tRCD: 9 cycles after ACT at 114, needs 14"
};

struct DramStats {
  std::uint64_t activates = 0, precharges = 0, reads = 0, writes = 0, refreshes = 0;
};

class DramDevice {
 public:
  DramDevice(const DramConfig& config, std::uint64_t rows_per_bank, std::string name = "dram");

  // One command sampled at `cycle`. Cycles must not decrease between calls.
  void Issue(std::uint64_t cycle, const CommandWord& command);
  // Read data due exactly at `cycle` (one per RD, t_cl after it), or nothing.
  std::optional<Word> DataAt(std::uint64_t cycle);
  // Call once at the end of a run: a refresh that is overdue at `cycle` is a violation too.
  void Finish(std::uint64_t cycle);

  const std::vector<Violation>& Violations() const { return violations_; }
  // All violations, one per line ("" when there are none).
  std::string Report(std::size_t max_lines = 20) const;
  const DramStats& Stats() const { return stats_; }
  // The stored word (zeros if never written); for tests.
  Word Peek(std::uint32_t bank_group, std::uint32_t bank, std::uint32_t row,
            std::uint32_t column) const;

  // The JEDEC allowance: refresh may be postponed by up to eight intervals.
  static constexpr std::uint64_t kMaxPostponedRefreshes = 8;

 private:
  using Time = std::int64_t;
  static constexpr Time kNever = -(Time{1} << 40);

  struct Bank {
    bool open = false;
    std::uint32_t row = 0;
    Time act = kNever, pre = kNever, read = kNever, write = kNever;
  };

  void Check(bool ok, std::string_view rule, Time since, Time needed, const char* after);
  void Violate(std::string_view rule, const std::string& detail);
  bool CheckAddress(const CommandWord& command);
  std::uint64_t Key(std::uint32_t bank_index, std::uint32_t row, std::uint32_t column) const;

  void Activate(Bank& bank, std::uint32_t group, const CommandWord& command);
  void Precharge(Bank& bank);
  void Column(Bank& bank, std::uint32_t group, std::uint32_t bank_index,
              const CommandWord& command);
  void Refresh();

  DramConfig config_;
  std::uint64_t rows_per_bank_;
  std::uint32_t columns_;
  std::string name_;

  Time now_ = 0;
  std::string what_;  // the command being checked, for messages
  std::vector<Bank> banks_;
  std::vector<Time> group_act_, group_column_;  // last ACT / column command per bank group
  Time last_act_ = kNever, last_column_ = kNever, last_read_ = kNever, last_write_ = kNever;
  Time last_refresh_ = kNever;  // for tRFC
  Time refresh_clock_ = 0;      // for tREFI: the device starts refreshed
  std::deque<Time> recent_acts_;  // the last four ACTs, for tFAW
  std::deque<std::pair<Time, Word>> read_data_;
  std::unordered_map<std::uint64_t, Word> cells_;
  std::vector<Violation> violations_;
  DramStats stats_;
};

}  // namespace systole::dram
