#include "sim/dram/sdram_device.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

namespace systole::dram {

SdramTiming SdramTiming::Grade7(double mhz) {
  // 1 % slack: the grade's 143 MHz is its 7.0 ns tCK (6.99 ns exactly), and 21 ns is 3 of them
  auto cycles = [mhz](double ns) {
    return static_cast<std::uint64_t>(std::max(1.0, std::ceil(ns * mhz / 1000.0 - 0.01)));
  };
  SdramTiming t;
  t.t_rcd = static_cast<unsigned>(cycles(21));
  t.t_rp = static_cast<unsigned>(cycles(21));
  t.t_rc = static_cast<unsigned>(cycles(63));
  t.t_ras = static_cast<unsigned>(cycles(42));
  t.t_rrd = static_cast<unsigned>(cycles(14));
  t.t_wr = static_cast<unsigned>(cycles(14));
  t.t_mrd = 2;
  t.t_rfc = static_cast<unsigned>(cycles(63));
  // The maxima round down: a controller must act before them.
  t.t_ras_max = static_cast<std::uint64_t>(100000.0 * mhz / 1000.0);
  t.t_ref = static_cast<std::uint64_t>(64e6 * mhz / 1000.0);
  t.t_init = cycles(200000);
  return t;
}

const char* SdramDevice::CmdName(Cmd cmd) {
  switch (cmd) {
    case Cmd::kInhibit: return "INHIBIT";
    case Cmd::kNop: return "NOP";
    case Cmd::kActivate: return "ACT";
    case Cmd::kRead: return "RD";
    case Cmd::kWrite: return "WR";
    case Cmd::kPrecharge: return "PRE";
    case Cmd::kRefresh: return "REF";
    case Cmd::kMode: return "MRS";
    case Cmd::kBurstStop: return "BST";
  }
  return "?";
}

SdramDevice::Cmd SdramDevice::Decode(const SdramPins& p) {
  if (p.cs_n) return Cmd::kInhibit;
  const unsigned code = (p.ras_n ? 4u : 0u) | (p.cas_n ? 2u : 0u) | (p.we_n ? 1u : 0u);
  switch (code) {
    case 0b111: return Cmd::kNop;
    case 0b011: return Cmd::kActivate;
    case 0b101: return Cmd::kRead;
    case 0b100: return Cmd::kWrite;
    case 0b010: return Cmd::kPrecharge;
    case 0b001: return Cmd::kRefresh;
    case 0b000: return Cmd::kMode;
    case 0b110: return Cmd::kBurstStop;
    default: return Cmd::kNop;
  }
}

SdramDevice::SdramDevice(const SdramTiming& timing, const SdramGeometry& geometry,
                         std::string name)
    : t_(timing),
      g_(geometry),
      name_(std::move(name)),
      banks_(geometry.banks),
      row_refreshed_(timing.refresh_rows, 0) {}

void SdramDevice::Violate(const std::string& rule, const std::string& detail) {
  violations_.push_back({static_cast<std::uint64_t>(now_), rule,
                         fmt::format("{}: cycle {}: {}: {}: {}", name_, now_, what_, rule, detail)});
}

void SdramDevice::Check(const std::string& rule, Time since, Time needed,
                        const std::string& after) {
  if (now_ - since >= needed) return;
  Violate(rule, fmt::format("{} cycles after {} at cycle {}, needs {}", now_ - since, after, since,
                            needed));
}

unsigned SdramDevice::BurstLength() const {
  return burst_code_ == 7 ? (1u << g_.col_bits) : (1u << burst_code_);
}

unsigned SdramDevice::Column(const Burst& b, unsigned beat) const {
  const unsigned n = b.length;
  const unsigned base = b.start_col & ~(n - 1);
  const unsigned offset = b.start_col & (n - 1);
  const unsigned in = interleaved_ ? (offset ^ beat) : ((offset + beat) & (n - 1));
  return base | in;
}

std::uint64_t SdramDevice::Key(unsigned bank, unsigned row, unsigned col) const {
  return ((std::uint64_t{row} * g_.banks + bank) << g_.col_bits) | col;
}

std::uint16_t SdramDevice::Peek(unsigned bank, unsigned row, unsigned column) const {
  const auto it = cells_.find(Key(bank, row, column));
  return it == cells_.end() ? 0 : it->second;
}

SdramDrive SdramDevice::ReadDrive(std::uint64_t cycle) const {
  const Time at = static_cast<Time>(cycle);
  for (const ReadBeat& beat : read_beats_) {
    if (beat.at < at) continue;
    if (beat.at > at) break;
    // DQM masks read data two edges after it is sampled (an edge not seen had DQM low).
    std::uint32_t mask = 0;
    for (const auto& [when, dqm] : dqm_hist_) {
      if (when == at - 2) mask = dqm;
    }
    return {beat.data, beat.bytes & ~mask & 3u};
  }
  return {};
}

void SdramDevice::PrechargeBank(unsigned index, Time at) {
  Bank& bank = banks_[index];
  bank.open = false;
  bank.pre = at;
  bank.auto_pre_at = kNever;
}

void SdramDevice::StopBurst(Time read_end) {
  if (!burst_.active) return;
  if (burst_.auto_pre) {
    Violate("auto-precharge", "interrupts a burst with auto-precharge");
  }
  burst_.active = false;
  while (!read_beats_.empty() && read_beats_.back().at >= read_end) read_beats_.pop_back();
}

void SdramDevice::Advance(Time until) {
  // write beats at edges the caller skipped were not driven
  if (burst_.active && burst_.write) {
    while (burst_.active && burst_.next < until) {
      Violate("DQ", fmt::format("write beat {} at cycle {} not driven", burst_.beat, burst_.next));
      ++burst_.beat;
      ++burst_.next;
      if (burst_.beat == burst_.length) burst_.active = false;
    }
  }
  if (burst_.active && !burst_.write && burst_.next + burst_.length - burst_.beat <= until) {
    burst_.active = false;  // a read burst ends by itself
  }
  while (!read_beats_.empty() && read_beats_.front().at < until) read_beats_.pop_front();
  for (unsigned i = 0; i < banks_.size(); ++i) {
    if (banks_[i].open && banks_[i].auto_pre_at != kNever && banks_[i].auto_pre_at <= until) {
      PrechargeBank(i, banks_[i].auto_pre_at);
      ++stats_.precharges;
    }
  }
}

void SdramDevice::CheckRefresh() {
  if (!init_done_) return;
  const unsigned row = static_cast<unsigned>(ref_count_ % t_.refresh_rows);
  if (!ref_overdue_reported_ && now_ - row_refreshed_[row] > static_cast<Time>(t_.t_ref)) {
    Violate("tREF", fmt::format("refresh row {} last refreshed at cycle {}, over {} cycles (64 ms)",
                                row, row_refreshed_[row], t_.t_ref));
    ref_overdue_reported_ = true;
  }
  if (t_.refresh_gap_limit != 0 && last_ref_ != kNever &&
      now_ - last_ref_ > static_cast<Time>(t_.refresh_gap_limit)) {
    Violate("tREFI", fmt::format("no REF since cycle {} (limit {} cycles)", last_ref_,
                                 t_.refresh_gap_limit));
    last_ref_ = now_;  // report the next lapse afresh
  }
}

void SdramDevice::Edge(std::uint64_t cycle, const SdramPins& pins) {
  now_ = static_cast<Time>(cycle);
  const Cmd cmd = Decode(pins);
  what_ = CmdName(cmd);
  if (cmd == Cmd::kActivate) what_ = fmt::format("ACT bank {} row {}", pins.ba, pins.a);
  if (cmd == Cmd::kRead || cmd == Cmd::kWrite) {
    what_ = fmt::format("{}{} bank {} col {}", CmdName(cmd), (pins.a >> 10) & 1 ? "A" : "",
                        pins.ba, pins.a & ((1u << g_.col_bits) - 1));
  }
  if (cmd == Cmd::kPrecharge) {
    what_ = (pins.a >> 10) & 1 ? std::string("PRE all") : fmt::format("PRE bank {}", pins.ba);
  }

  if (!started_) {
    if (!pins.cke) return;  // power is up once CKE is high; until then nothing counts
    started_ = true;
    first_edge_ = now_;
  }
  Advance(now_);
  // DQM history for read masking (latency 2); skipped edges had DQM low.
  dqm_hist_.emplace_back(now_, pins.dqm & 3u);
  if (dqm_hist_.size() > 3) dqm_hist_.pop_front();

  if (!pins.cke && !cke_reported_) {
    Violate("CKE", "CKE low after power-up (power-down and self refresh are not supported)");
    cke_reported_ = true;
  }
  if (pins.dq_oe && ReadDrive(cycle).bytes != 0) {
    Violate("DQ", "controller and device both drive DQ");
  }
  CheckRefresh();
  for (unsigned i = 0; i < banks_.size(); ++i) {
    Bank& bank = banks_[i];
    if (bank.open && !bank.ras_max_reported && now_ - bank.act > static_cast<Time>(t_.t_ras_max)) {
      Violate("tRASmax", fmt::format("bank {} row {} open since cycle {}, max {} cycles", i,
                                     bank.row, bank.act, t_.t_ras_max));
      bank.ras_max_reported = true;
    }
  }

  if (cmd == Cmd::kInhibit || cmd == Cmd::kNop) {
    // the write burst takes this edge's beat
  } else {
    if (now_ - first_edge_ < static_cast<Time>(t_.t_init)) {
      Violate("power-up", fmt::format("{} cycles of the {} NOP cycles (200 us) have passed",
                                      now_ - first_edge_, t_.t_init));
      return;
    }
    Check("tMRD", last_mrs_, t_.t_mrd, "MRS");
  }

  switch (cmd) {
    case Cmd::kInhibit:
    case Cmd::kNop: break;
    case Cmd::kActivate: Activate(pins); break;
    case Cmd::kRead: Column(pins, false); break;
    case Cmd::kWrite: Column(pins, true); break;
    case Cmd::kPrecharge: Precharge(pins); break;
    case Cmd::kRefresh: Refresh(); break;
    case Cmd::kMode: Mode(pins); break;
    case Cmd::kBurstStop: StopBurst(now_ + (burst_.write ? 0 : cas_latency_)); break;
  }

  // this edge's write beat (a command that interrupted the burst has ended it above)
  if (burst_.active && burst_.write && burst_.next == now_) {
    const unsigned col = Column(burst_, burst_.beat);
    std::uint16_t& cell = cells_[Key(burst_.bank, burst_.row, col)];
    const std::uint32_t write_bytes = ~pins.dqm & 3u;
    if (write_bytes != 0 && !pins.dq_oe) {
      Violate("DQ", fmt::format("write beat {} not driven", burst_.beat));
    }
    if (write_bytes & 1u) cell = static_cast<std::uint16_t>((cell & 0xff00u) | (pins.dq & 0xffu));
    if (write_bytes & 2u) cell = static_cast<std::uint16_t>((cell & 0x00ffu) | (pins.dq & 0xff00u));
    ++stats_.write_beats;
    banks_[burst_.bank].last_write_beat = now_;
    ++burst_.beat;
    ++burst_.next;
    if (burst_.beat == burst_.length) {
      burst_.active = false;
      if (burst_.auto_pre) banks_[burst_.bank].auto_pre_at = now_ + t_.t_wr;
    }
  }
}

// ACT, RD and WR: only after the power-up sequence, and only to a bank the chip has; otherwise
// the violation is recorded and the command does nothing.
bool SdramDevice::AcceptsBankCommand(const SdramPins& pins) {
  if (!init_done_) {
    Violate(precharged_all_ && init_refs_ >= t_.init_refreshes ? "mode" : "power-up",
            "before the power-up sequence ended with LOAD MODE REGISTER");
    return false;
  }
  if (pins.ba >= g_.banks) {
    Violate("address", "no such bank");
    return false;
  }
  return true;
}

void SdramDevice::Activate(const SdramPins& pins) {
  if (!AcceptsBankCommand(pins)) return;
  ++stats_.activates;
  Bank& bank = banks_[pins.ba];
  if (bank.open) {
    Violate("bank open", fmt::format("row {} is still open", bank.row));
    return;
  }
  const unsigned row = pins.a & ((1u << g_.row_bits) - 1);
  Check("tRP", bank.pre, t_.t_rp, "PRE");
  Check("tRC", bank.act, t_.t_rc, "ACT of this bank");
  Check("tRRD", last_act_, t_.t_rrd, "ACT");
  Check("tRFC", last_ref_, t_.t_rfc, "REF");
  bank.open = true;
  bank.row = row;
  bank.act = now_;
  bank.ras_max_reported = false;
  bank.auto_pre_at = kNever;
  last_act_ = now_;
}

void SdramDevice::Column(const SdramPins& pins, bool write) {
  if (!AcceptsBankCommand(pins)) return;
  const unsigned col_mask = (1u << g_.col_bits) - 1;
  const std::uint32_t outside = pins.a & ~(col_mask | (1u << 10)) & 0x1fffu;
  if (g_.col_bits < 10 && outside != 0) {
    Violate("address", fmt::format("column address 0x{:x} has bits above the {} columns", pins.a,
                                   1u << g_.col_bits));
  }
  Bank& bank = banks_[pins.ba];
  ++(write ? stats_.writes : stats_.reads);
  if (!bank.open) {
    Violate("bank closed", "no row is open");
    return;
  }
  if (bank.auto_pre_at != kNever) {
    Violate("auto-precharge", "the bank is being precharged by an earlier auto-precharge");
    return;
  }
  Check("tRCD", bank.act, t_.t_rcd, "ACT");
  // a new column command ends the burst in progress: a read's data stops where the new
  // read's begins (or at this edge for a write, whose data takes the bus now)
  StopBurst(write ? now_ : now_ + cas_latency_);
  const bool auto_pre = (pins.a >> 10) & 1u;
  Burst b;
  b.active = true;
  b.write = write;
  b.auto_pre = auto_pre;
  b.bank = pins.ba;
  b.row = bank.row;
  b.start_col = pins.a & col_mask;
  b.length = write && single_write_ ? 1 : BurstLength();
  b.beat = 0;
  b.next = write ? now_ : now_ + cas_latency_;
  if (interleaved_ && b.length > 8) b.length = 8;  // reserved combination, reported at MRS
  if (write) {
    burst_ = b;  // the beats are taken edge by edge (this edge's in Edge)
    return;
  }
  for (unsigned i = 0; i < b.length; ++i) {
    const auto it = cells_.find(Key(b.bank, b.row, Column(b, i)));
    read_beats_.push_back({b.next + i, it == cells_.end() ? std::uint16_t{0} : it->second, 3u});
  }
  stats_.read_beats += b.length;
  burst_ = b;
  if (auto_pre) {
    // the precharge starts when the burst is done (and not before tRAS)
    bank.auto_pre_at = std::max(now_ + static_cast<Time>(b.length), bank.act + t_.t_ras);
  }
}

void SdramDevice::Precharge(const SdramPins& pins) {
  const bool all = (pins.a >> 10) & 1u;
  if (!all && pins.ba >= g_.banks) {
    Violate("address", "no such bank");
    return;
  }
  if (all && !precharged_all_) precharged_all_ = true;  // the power-up step
  // a burst from a bank being precharged ends: reads CL edges later, writes now
  if (burst_.active && (all || burst_.bank == pins.ba)) {
    StopBurst(burst_.write ? now_ : now_ + cas_latency_);
  }
  for (unsigned i = 0; i < banks_.size(); ++i) {
    if (!all && i != pins.ba) continue;
    Bank& bank = banks_[i];
    if (!bank.open) continue;  // precharging an idle bank is a no-op
    if (bank.auto_pre_at != kNever) {
      Violate("auto-precharge", fmt::format("bank {} is being auto-precharged", i));
    }
    Check("tRAS", bank.act, t_.t_ras, fmt::format("ACT of bank {}", i));
    Check("tWR", bank.last_write_beat, t_.t_wr, fmt::format("the last write beat to bank {}", i));
    ++stats_.precharges;
    PrechargeBank(i, now_);
  }
}

void SdramDevice::Refresh() {
  if (!precharged_all_) {
    Violate("power-up", "REF before PRECHARGE ALL");
  }
  ++stats_.refreshes;
  for (unsigned i = 0; i < banks_.size(); ++i) {
    const Bank& bank = banks_[i];
    if (bank.open) {
      Violate("bank open", fmt::format("bank {} has row {} open", i, bank.row));
    } else {
      Check("tRP", bank.pre, t_.t_rp, fmt::format("PRE of bank {}", i));
    }
  }
  Check("tRFC", last_ref_, t_.t_rfc, "REF");
  Check("tRC", last_act_, t_.t_rc, "ACT");
  if (!init_done_) ++init_refs_;
  const unsigned row = static_cast<unsigned>(ref_count_ % t_.refresh_rows);
  row_refreshed_[row] = now_;
  ++ref_count_;
  ref_overdue_reported_ = false;
  last_ref_ = now_;
}

void SdramDevice::Mode(const SdramPins& pins) {
  if (!init_done_ && (!precharged_all_ || init_refs_ < t_.init_refreshes)) {
    Violate("power-up", fmt::format("MRS after {} of {} AUTO REFRESHes{}", init_refs_,
                                    t_.init_refreshes,
                                    precharged_all_ ? "" : " and before PRECHARGE ALL"));
  }
  for (unsigned i = 0; i < banks_.size(); ++i) {
    if (banks_[i].open) {
      Violate("bank open", fmt::format("bank {} has row {} open", i, banks_[i].row));
    } else {
      Check("tRP", banks_[i].pre, t_.t_rp, fmt::format("PRE of bank {}", i));
    }
  }
  Check("tRFC", last_ref_, t_.t_rfc, "REF");
  const unsigned bl = pins.a & 7u;
  const unsigned cl = (pins.a >> 4) & 7u;
  const bool interleaved = (pins.a >> 3) & 1u;
  if (bl == 4 || bl == 5 || bl == 6 || (bl == 7 && interleaved)) {
    Violate("mode", fmt::format("reserved burst length code {}{}", bl,
                                interleaved ? " (interleaved)" : ""));
  }
  if (cl != 2 && cl != 3) Violate("mode", fmt::format("CAS latency {} not supported", cl));
  if (((pins.a >> 7) & 3u) != 0 || ((pins.a >> 10) & 7u) != 0) {
    Violate("mode", fmt::format("reserved or test mode bits in 0x{:x}", pins.a));
  }
  if (!init_done_) {
    // stored data means something from here on: every row's 64 ms start now
    std::fill(row_refreshed_.begin(), row_refreshed_.end(), now_);
  }
  burst_code_ = bl == 7 ? 7 : std::min(bl, 3u);
  cas_latency_ = cl == 2 ? 2 : 3;
  interleaved_ = interleaved;
  single_write_ = (pins.a >> 9) & 1u;
  mode_set_ = true;
  init_done_ = true;
  last_mrs_ = now_;
}

void SdramDevice::Finish(std::uint64_t cycle) {
  now_ = static_cast<Time>(cycle);
  what_ = "end of run";
  if (started_) {
    Advance(now_);
    CheckRefresh();
  }
}

std::string SdramDevice::Report(std::size_t max_lines) const {
  std::string text;
  for (std::size_t i = 0; i < violations_.size() && i < max_lines; ++i) {
    text += violations_[i].message + "\n";
  }
  if (violations_.size() > max_lines) {
    text += fmt::format("... and {} more\n", violations_.size() - max_lines);
  }
  return text;
}

}  // namespace systole::dram
