// SdramDevice: one x16 SDR SDRAM chip (the ULX3S board's 32 MB part, AS4C16M16SA-7 class: 4
// banks x 8192 rows x 512 columns of 16 bits; the 64 MB AS4C32M16SB has 1024 columns) as its
// pins see it, clock edge by clock edge.
//
// It stores data, executes the commands (ACTIVE, READ, WRITE with or without auto-precharge,
// PRECHARGE one/all, AUTO REFRESH, LOAD MODE REGISTER, BURST TERMINATE), bursts of the
// programmed length and type (full page too), the programmed CAS latency, DQM on writes
// (latency 0) and on reads (latency 2), and a burst interrupted by a later column command,
// PRECHARGE or BURST TERMINATE as the datasheet describes. Every broken rule is recorded as a
// Violation naming the cycle, the rule and the command (the same shape as DramDevice's), and
// never stops the simulation:
//
//   power-up   a command before t_init NOP cycles; REF before PRECHARGE ALL; MRS before
//              init_refreshes REFs; ACT/RD/WR before the power-up sequence ended
//   mode       ACT/RD/WR before a LOAD MODE REGISTER; an unsupported mode value (CL not 2/3,
//              reserved burst length, test modes)
//   tRCD tRP tRC tRAS tRASmax tRRD tWR tMRD tRFC   the datasheet's intervals, in cycles
//   tREF       a row not refreshed within 64 ms (the device's refresh counter walks the 8192
//              rows: REF number n refreshes row n mod 8192; the 64 ms of every row start when
//              the power-up sequence ends, before which nothing is stored); with refresh_gap_limit set also
//              "tREFI": more than that many cycles between two REFs (distributed refresh)
//   bank closed / bank open   a column command to an idle bank, ACT to an active bank, REF or
//              MRS with a bank active
//   DQ         controller and device both driving DQ at one edge; a write beat not driven
//   CKE        CKE low after power-up (power-down and self refresh are not modelled)
//   address    a column outside the row
//   auto-precharge   a burst with auto-precharge interrupted, or a command to its bank before
//              the precharge has finished
//
// Timing convention: Edge(cycle, pins) is called for every rising clock edge with the pins as
// the device samples them there (command, address, DQ driven by the controller). Read data is
// on DQ for the controller to sample at edge RD + CL (+ beat): ReadDrive(cycle) says what the
// device drives at `cycle`; call it before Edge for the same cycle. Cycles may skip (idle
// edges: NOP, nothing driven), but never go back.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/dram/dram_device.hpp"  // Violation

namespace systole::dram {

// Datasheet intervals in clock cycles.
struct SdramTiming {
  unsigned t_rcd = 2, t_rp = 2, t_rc = 7, t_ras = 5, t_rrd = 2, t_wr = 2, t_mrd = 2, t_rfc = 7;
  std::uint64_t t_ras_max = 14300;     // 100 us
  std::uint64_t t_ref = 9152000;       // 64 ms: every row refreshed within it
  std::uint64_t t_init = 28600;        // 200 us of NOPs after power-up
  unsigned init_refreshes = 2;         // AUTO REFRESHes the power-up sequence needs
  unsigned refresh_rows = 8192;        // REFs per t_ref
  // 0: off. Otherwise at most this many cycles between two REFs (a stricter, optional rule
  // that proves a controller refreshes evenly; the datasheet also allows burst refresh).
  std::uint64_t refresh_gap_limit = 0;

  // The -7 speed grade (AS4C16M16SA-7 / AS4C32M16SB-7 datasheets, 143 MHz at CL3) at `mhz`:
  // tRCD 21 ns, tRP 21 ns, tRC 63 ns, tRAS 42 ns .. 100 us, tRRD 14 ns, tWR 14 ns,
  // tMRD 2 tCK, tRFC = tRC 63 ns, 8192 refreshes per 64 ms, power-up 200 us; each rounded up
  // to whole cycles (and at least one).
  static SdramTiming Grade7(double mhz);
};

struct SdramGeometry {
  unsigned banks = 4;
  unsigned row_bits = 13;
  unsigned col_bits = 9;  // 512 columns (32 MB); 10 for the 64 MB part
};

// The pins at one rising edge. Commands by (cs_n, ras_n, cas_n, we_n) as in every SDR SDRAM
// datasheet's truth table.
struct SdramPins {
  bool cke = true;
  bool cs_n = true, ras_n = true, cas_n = true, we_n = true;
  std::uint32_t ba = 0;
  std::uint32_t a = 0;       // A[12:0]; A10 = auto-precharge / precharge all
  std::uint16_t dq = 0;      // driven by the controller
  bool dq_oe = false;        // the controller drives DQ
  std::uint32_t dqm = 0;     // [0] lower byte, [1] upper byte; high = masked
};

// What the device drives on DQ at one edge.
struct SdramDrive {
  std::uint16_t data = 0;
  std::uint32_t bytes = 0;  // bit b: byte b driven (DQM can mask one byte of a read beat)
};

struct SdramStats {
  std::uint64_t activates = 0, precharges = 0, reads = 0, writes = 0, refreshes = 0;
  std::uint64_t read_beats = 0, write_beats = 0;
};

class SdramDevice {
 public:
  enum class Cmd { kInhibit, kNop, kActivate, kRead, kWrite, kPrecharge, kRefresh, kMode, kBurstStop };

  SdramDevice(const SdramTiming& timing, const SdramGeometry& geometry = {},
              std::string name = "sdram");

  // What the device drives on DQ at edge `cycle` (nothing: bytes == 0).
  SdramDrive ReadDrive(std::uint64_t cycle) const;
  // The pins sampled at edge `cycle`.
  void Edge(std::uint64_t cycle, const SdramPins& pins);
  // Call once at the end of a run: overdue refreshes are violations too.
  void Finish(std::uint64_t cycle);

  const std::vector<Violation>& Violations() const { return violations_; }
  std::string Report(std::size_t max_lines = 20) const;
  const SdramStats& Stats() const { return stats_; }
  bool Initialized() const { return init_done_; }
  // The stored 16-bit word (0 if never written); for tests.
  std::uint16_t Peek(unsigned bank, unsigned row, unsigned column) const;

  static Cmd Decode(const SdramPins& pins);
  static const char* CmdName(Cmd cmd);

 private:
  using Time = std::int64_t;
  static constexpr Time kNever = -(Time{1} << 40);

  struct Bank {
    bool open = false;
    unsigned row = 0;
    Time act = kNever, pre = kNever, last_write_beat = kNever;
    bool ras_max_reported = false;
    Time auto_pre_at = kNever;  // pending auto-precharge: the bank closes at this edge
  };
  // The burst in progress (at most one: a new column command ends the one before).
  struct Burst {
    bool active = false, write = false, auto_pre = false;
    unsigned bank = 0, row = 0, start_col = 0, length = 0, beat = 0;
    Time next = 0;  // the edge of beat `beat` (writes: data sampled; reads: data driven)
  };

  void Violate(const std::string& rule, const std::string& detail);
  void Check(const std::string& rule, Time since, Time needed, const std::string& after);
  void Advance(Time until);  // runs write beats and auto-precharges up to edge `until` (excl.)
  void StopBurst(Time read_end);  // ends the burst in progress; read data ends before read_end
  unsigned BurstLength() const;
  unsigned Column(const Burst& b, unsigned beat) const;
  std::uint64_t Key(unsigned bank, unsigned row, unsigned col) const;
  void CheckRefresh();

  bool AcceptsBankCommand(const SdramPins& pins);
  void Activate(const SdramPins& pins);
  void Column(const SdramPins& pins, bool write);
  void Precharge(const SdramPins& pins);
  void Refresh();
  void Mode(const SdramPins& pins);
  void PrechargeBank(unsigned bank, Time at);

  SdramTiming t_;
  SdramGeometry g_;
  std::string name_;
  Time now_ = 0;
  std::string what_;

  // power-up
  bool started_ = false, init_done_ = false, precharged_all_ = false, mode_set_ = false;
  Time first_edge_ = 0;
  unsigned init_refs_ = 0;
  unsigned cas_latency_ = 3, burst_code_ = 0;
  bool interleaved_ = false, single_write_ = false;
  bool cke_reported_ = false;

  std::vector<Bank> banks_;
  Time last_act_ = kNever, last_ref_ = kNever, last_mrs_ = kNever;
  std::vector<Time> row_refreshed_;  // per refresh-counter row
  std::uint64_t ref_count_ = 0;
  bool ref_overdue_reported_ = false;
  Burst burst_;
  std::deque<std::pair<Time, std::uint32_t>> dqm_hist_;  // DQM at the last three edges seen
  // read beats scheduled on DQ: edge -> data (before read DQM masking)
  struct ReadBeat { Time at; std::uint16_t data; std::uint32_t bytes; };
  std::deque<ReadBeat> read_beats_;
  std::unordered_map<std::uint64_t, std::uint16_t> cells_;
  std::vector<Violation> violations_;
  SdramStats stats_;
};

}  // namespace systole::dram
