#include "sim/dram/dram_device.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace systole::dram {

const char* CommandName(Command command) {
  switch (command) {
    case Command::kNone: return "NOP";
    case Command::kActivate: return "ACT";
    case Command::kPrecharge: return "PRE";
    case Command::kRead: return "RD";
    case Command::kWrite: return "WR";
    case Command::kRefresh: return "REF";
  }
  return "?";
}

DramDevice::DramDevice(const DramConfig& config, std::uint64_t rows_per_bank, std::string name)
    : config_(config),
      rows_per_bank_(rows_per_bank),
      columns_(config.row_bytes / kWordBytes),
      name_(std::move(name)),
      banks_(config.Banks()),
      group_act_(config.bank_groups, kNever),
      group_column_(config.bank_groups, kNever) {}

void DramDevice::Violate(std::string_view rule, const std::string& detail) {
  violations_.push_back({static_cast<std::uint64_t>(now_), std::string(rule),
                         fmt::format("{}: cycle {}: {}: {}: {}", name_, now_, what_, rule, detail)});
}

// `since` is the time of the earlier command the rule counts from; `needed` its distance.
void DramDevice::Check(bool ok, std::string_view rule, Time since, Time needed, const char* after) {
  if (ok || now_ - since >= needed) return;
  Violate(rule, fmt::format("{} cycles after {} at cycle {}, needs {}", now_ - since, after, since,
                            needed));
}

std::uint64_t DramDevice::Key(std::uint32_t bank_index, std::uint32_t row,
                              std::uint32_t column) const {
  return (std::uint64_t{row} * banks_.size() + bank_index) * columns_ + column;
}

bool DramDevice::CheckAddress(const CommandWord& command) {
  if (command.command == Command::kRefresh) return true;
  if (command.bank_group >= config_.bank_groups || command.bank >= config_.banks_per_group) {
    Violate("address", "no such bank");
    return false;
  }
  if (command.row >= rows_per_bank_) {
    Violate("address", fmt::format("row {} outside the {} rows of a bank", command.row,
                                   rows_per_bank_));
    return false;
  }
  if (command.column >= columns_) {
    Violate("address", fmt::format("column {} outside the {} of a row", command.column, columns_));
    return false;
  }
  return true;
}

void DramDevice::Issue(std::uint64_t cycle, const CommandWord& command) {
  if (command.command == Command::kNone) return;
  now_ = static_cast<Time>(cycle);
  what_ = command.command == Command::kRefresh
              ? std::string("REF")
              : fmt::format("{} bg {} bank {} row {} col {}", CommandName(command.command),
                            command.bank_group, command.bank, command.row, command.column);
  // A refresh postponed beyond the allowance is reported once, at the first command after it.
  const Time refresh_limit = static_cast<Time>((kMaxPostponedRefreshes + 1) * config_.t_refi);
  if (command.command != Command::kRefresh && now_ - refresh_clock_ > refresh_limit) {
    Violate("tREFI", fmt::format("no REF since cycle {} ({} x tREFI allowed)", refresh_clock_,
                                 kMaxPostponedRefreshes + 1));
    refresh_clock_ = now_;  // report the next lapse afresh
  }
  if (!CheckAddress(command)) return;
  const std::uint32_t group = command.bank_group;
  const std::uint32_t index = group * config_.banks_per_group + command.bank;
  switch (command.command) {
    case Command::kActivate: Activate(banks_[index], group, command); break;
    case Command::kPrecharge: Precharge(banks_[index]); break;
    case Command::kRead:
    case Command::kWrite: Column(banks_[index], group, index, command); break;
    case Command::kRefresh: Refresh(); break;
    case Command::kNone: break;
  }
}

void DramDevice::Activate(Bank& bank, std::uint32_t group, const CommandWord& command) {
  ++stats_.activates;
  if (bank.open) {
    Violate("bank open", fmt::format("row {} is still open", bank.row));
    return;
  }
  Check(false, "tRP", bank.pre, config_.t_rp, "PRE");
  Check(false, "tRFC", last_refresh_, config_.t_rfc, "REF");
  Check(false, "tRRD_L", group_act_[group], config_.t_rrd_l, "ACT in the same bank group");
  Check(false, "tRRD_S", last_act_, config_.t_rrd_s, "ACT");
  if (recent_acts_.size() == 4) {
    Check(false, "tFAW", recent_acts_.front(), config_.t_faw, "the fourth ACT before it");
    recent_acts_.pop_front();
  }
  recent_acts_.push_back(now_);
  bank.open = true;
  bank.row = command.row;
  bank.act = now_;
  group_act_[group] = now_;
  last_act_ = now_;
}

void DramDevice::Precharge(Bank& bank) {
  ++stats_.precharges;
  // Precharging a closed bank is legal (a no-op), as in JEDEC devices.
  if (bank.open) {
    Check(false, "tRAS", bank.act, config_.t_ras, "ACT");
    Check(false, "tRTP", bank.read, config_.t_rtp, "RD");
    Check(false, "tWR", bank.write, config_.WriteToPrecharge(), "WR (t_wl + t_burst + t_wr)");
  }
  bank.open = false;
  bank.pre = now_;
}

void DramDevice::Column(Bank& bank, std::uint32_t group, std::uint32_t index,
                        const CommandWord& command) {
  const bool read = command.command == Command::kRead;
  ++(read ? stats_.reads : stats_.writes);
  if (!bank.open) {
    Violate("bank closed", "no row is open");
    return;
  }
  if (bank.row != command.row) {
    Violate("row mismatch", fmt::format("row {} is open", bank.row));
    return;
  }
  Check(false, "tRCD", bank.act, config_.t_rcd, "ACT");
  Check(false, "tCCD_L", group_column_[group], config_.t_ccd_l, "RD/WR in the same bank group");
  Check(false, "tCCD_S", last_column_, config_.t_ccd_s, "RD/WR");
  if (read) {
    Check(false, "tWTR", last_write_, config_.WriteToRead(), "WR (t_wl + t_burst + t_wtr)");
  } else {
    Check(false, "tRTW", last_read_, config_.t_rtw, "RD");
  }
  group_column_[group] = now_;
  last_column_ = now_;
  Word& cell = cells_[Key(index, bank.row, command.column)];
  if (read) {
    bank.read = now_;
    last_read_ = now_;
    read_data_.emplace_back(now_ + config_.t_cl, cell);
  } else {
    bank.write = now_;
    last_write_ = now_;
    for (unsigned b = 0; b < kWordBytes; ++b) {
      if ((command.wstrb >> b) & 1u) cell[b] = command.wdata[b];
    }
  }
}

void DramDevice::Refresh() {
  ++stats_.refreshes;
  for (std::size_t i = 0; i < banks_.size(); ++i) {
    const Bank& bank = banks_[i];
    if (bank.open) {
      Violate("bank open", fmt::format("bank {} has row {} open", i, bank.row));
    } else {
      Check(false, "tRP", bank.pre, config_.t_rp, fmt::format("PRE of bank {}", i).c_str());
    }
  }
  Check(false, "tRFC", last_refresh_, config_.t_rfc, "REF");
  last_refresh_ = now_;
  refresh_clock_ = now_;
}

std::optional<Word> DramDevice::DataAt(std::uint64_t cycle) {
  if (read_data_.empty() || read_data_.front().first != static_cast<Time>(cycle)) {
    return std::nullopt;
  }
  Word word = read_data_.front().second;
  read_data_.pop_front();
  return word;
}

void DramDevice::Finish(std::uint64_t cycle) {
  now_ = static_cast<Time>(cycle);
  what_ = "end of run";
  if (now_ - refresh_clock_ > static_cast<Time>((kMaxPostponedRefreshes + 1) * config_.t_refi)) {
    Violate("tREFI", fmt::format("no REF since cycle {}", refresh_clock_));
  }
  if (!read_data_.empty()) {
    Violate("read data", fmt::format("{} reads still owe data", read_data_.size()));
  }
}

std::string DramDevice::Report(std::size_t max_lines) const {
  std::string text;
  for (std::size_t i = 0; i < violations_.size() && i < max_lines; ++i) {
    text += violations_[i].message + "\n";
  }
  if (violations_.size() > max_lines) {
    text += fmt::format("… and {} more\n", violations_.size() - max_lines);
  }
  return text;
}

Word DramDevice::Peek(std::uint32_t bank_group, std::uint32_t bank, std::uint32_t row,
                      std::uint32_t column) const {
  const auto it = cells_.find(Key(bank_group * config_.banks_per_group + bank, row, column));
  return it == cells_.end() ? Word{} : it->second;
}

}  // namespace systole::dram
