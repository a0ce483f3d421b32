#include "sim/timing/memory_timing.hpp"

#include <algorithm>
#include <bit>
#include <deque>
#include <limits>
#include <stdexcept>

namespace systole::model {
// The DRAM channel model, named rather than anonymous because SharedMemory's state (declared in
// the header) holds channels: GCC's -Wsubobject-linkage objects to an anonymous type there once
// this file is batched into a unity build's translation unit.
namespace dram_channel {

using Time = std::int64_t;

struct Entry {
  bool write;
  unsigned bank, group;
  std::uint64_t row, column, word;
  std::size_t index;  // the access it serves
};

// One channel's queue, bank state and timing, mirroring systole_hbm_channel/_timing: every rule
// "B no sooner than tX after A" is an earliest cycle for B, moved on when A issues.
class Channel {
 public:
  Channel(const DramConfig& dram, unsigned depth)
      : d_(dram), depth_(depth), open_(dram.Banks(), false), open_row_(dram.Banks(), 0),
        wanted_(dram.Banks(), 0), act_at_(dram.Banks(), 0), col_at_(dram.Banks(), 0), pre_at_(dram.Banks(), 0),
        rrd_l_at_(dram.bank_groups, 0), ccd_l_at_(dram.bank_groups, 0) {}

  bool Full() const { return queue_.size() >= depth_; }
  // Nothing queued and no refresh pending: stepping it changes nothing until the next refresh.
  bool Quiet() const { return queue_.empty() && !refresh_due_; }
  // The row open in `bank` from time 0, as the host's last access left it.
  void Open(unsigned bank, std::uint64_t row) {
    open_[bank] = true;
    open_row_[bank] = row;
  }
  void Push(const Entry& entry) { queue_.push_back(entry); }

  // Issues this cycle's command, if any; a column command reports (access, when its response
  // is visible at the reorder buffer).
  bool Step(Time now, std::size_t& served, Time& done) {
    if (now > 0 && now % d_.t_refi == 0) refresh_due_ = true;
    if (queue_.empty() && !refresh_due_) {  // nothing to do (the common case: keep it cheap)
      starve_ = 0;
      return false;
    }
    const bool was_empty = queue_.empty();
    const bool starving = !queue_.empty() && starve_ >= d_.starvation_cycles;
    bool column = false;
    std::size_t pick = 0;
    if (refresh_due_) {
      Refresh(now);
    } else if (PickColumn(now, starving, pick)) {
      const Entry e = queue_[pick];
      Column(now, e);
      served = e.index;
      done = now + (e.write ? 2 : d_.t_cl + 2);
      queue_.erase(queue_.begin() + static_cast<std::ptrdiff_t>(pick));
      column = true;
    } else {
      RowCommand(now, starving);
    }
    if (was_empty || (column && pick == 0)) {
      starve_ = 0;
    } else {
      ++starve_;
    }
    return column;
  }

 private:
  bool Hit(const Entry& e) const { return open_[e.bank] && open_row_[e.bank] == e.row; }

  bool PickColumn(Time now, bool starving, std::size_t& pick) const {
    for (std::size_t i = 0; i < queue_.size() && (!starving || i == 0); ++i) {
      const Entry& e = queue_[i];
      if (!Hit(e) || now < col_at_[e.bank] || now < ccd_l_at_[e.group] || now < ccd_s_at_) continue;
      if (now < (e.write ? wr_at_ : rd_at_)) continue;
      bool older_same = false;
      for (std::size_t j = 0; j < i; ++j) older_same |= queue_[j].word == e.word;
      if (older_same) continue;
      pick = i;
      return true;
    }
    return false;
  }

  bool ActAllowed(Time now, const Entry& e) const {
    const bool faw_free = faw_.size() < 4 || now >= faw_.front() + d_.t_faw;
    return now >= act_at_[e.bank] && now >= rrd_l_at_[e.group] && now >= rrd_s_at_ && faw_free;
  }

  void RowCommand(Time now, bool starving) {
    std::vector<std::uint8_t>& wanted = wanted_;  // reused: this runs every cycle
    std::fill(wanted.begin(), wanted.end(), 0);
    for (const Entry& e : queue_) {
      if (Hit(e)) wanted[e.bank] = 1;
    }
    for (std::size_t i = 0; i < queue_.size() && (!starving || i == 0); ++i) {
      const Entry& e = queue_[i];
      if (!open_[e.bank] && ActAllowed(now, e)) {
        open_[e.bank] = true;
        open_row_[e.bank] = e.row;
        col_at_[e.bank] = std::max(col_at_[e.bank], now + d_.t_rcd);
        pre_at_[e.bank] = std::max(pre_at_[e.bank], now + d_.t_ras);
        rrd_l_at_[e.group] = std::max(rrd_l_at_[e.group], now + d_.t_rrd_l);
        rrd_s_at_ = std::max(rrd_s_at_, now + d_.t_rrd_s);
        if (faw_.size() == 4) faw_.pop_front();
        faw_.push_back(now);
        return;
      }
      if (open_[e.bank] && !Hit(e) && now >= pre_at_[e.bank] && (starving || wanted[e.bank] == 0)) {
        Precharge(now, e.bank);
        return;
      }
    }
  }

  void Precharge(Time now, unsigned bank) {
    open_[bank] = false;
    act_at_[bank] = std::max(act_at_[bank], now + d_.t_rp);
  }

  void Refresh(Time now) {
    for (unsigned b = 0; b < open_.size(); ++b) {
      if (open_[b] && now >= pre_at_[b]) {
        Precharge(now, b);
        return;
      }
    }
    if (std::any_of(open_.begin(), open_.end(), [](bool o) { return o; })) return;
    if (std::any_of(act_at_.begin(), act_at_.end(), [&](Time t) { return now < t; })) return;
    for (Time& t : act_at_) t = std::max(t, now + d_.t_rfc);
    refresh_due_ = false;
  }

  void Column(Time now, const Entry& e) {
    ccd_l_at_[e.group] = std::max(ccd_l_at_[e.group], now + d_.t_ccd_l);
    ccd_s_at_ = std::max(ccd_s_at_, now + d_.t_ccd_s);
    if (e.write) {
      pre_at_[e.bank] = std::max(pre_at_[e.bank], now + d_.WriteToPrecharge());
      rd_at_ = std::max(rd_at_, now + d_.WriteToRead());
    } else {
      pre_at_[e.bank] = std::max(pre_at_[e.bank], now + d_.t_rtp);
      wr_at_ = std::max(wr_at_, now + d_.t_rtw);
    }
  }

  DramConfig d_;
  unsigned depth_;
  std::vector<Entry> queue_;  // oldest first
  std::vector<bool> open_;
  std::vector<std::uint64_t> open_row_;
  std::vector<std::uint8_t> wanted_;  // RowCommand's banks with a hit queued, per bank
  std::vector<Time> act_at_, col_at_, pre_at_, rrd_l_at_, ccd_l_at_;
  Time rrd_s_at_ = 0, ccd_s_at_ = 0, rd_at_ = 0, wr_at_ = 0;
  std::deque<Time> faw_;
  bool refresh_due_ = false;
  std::uint64_t starve_ = 0;
};

}  // namespace dram_channel

using dram_channel::Channel;
using dram_channel::Time;

MemoryTimingModel::MemoryTimingModel(const Config& config, MemoryTimingOptions options)
    : config_(config), options_(options) {}

double MemoryTimingModel::ChannelPeakBytesPerCycle() const {
  return 32.0 / static_cast<double>(config_.dram.t_burst);
}

double MemoryTimingModel::PeakBytesPerCycle() const {
  return std::min(32.0, ChannelPeakBytesPerCycle() * config_.memory_channels);
}

std::vector<MemoryAccess> MemoryTimingModel::DmaAccesses(std::uint64_t address,
                                                         std::uint64_t stride, std::uint64_t rows,
                                                         std::uint64_t row_bytes, bool write) {
  std::vector<MemoryAccess> accesses;
  for (std::uint64_t r = 0; r < rows && row_bytes > 0; ++r) {
    const std::uint64_t begin = address + r * stride;
    for (std::uint64_t word = begin / 32; word <= (begin + row_bytes - 1) / 32; ++word) {
      accesses.push_back({write, word * 32});
    }
  }
  return accesses;
}

DramLocation MemoryTimingModel::Locate(std::uint64_t a) const {
  const DramConfig& d = config_.dram;
  const unsigned il = static_cast<unsigned>(std::countr_zero(config_.interleave_bytes));
  const unsigned ch_bits = static_cast<unsigned>(std::countr_zero(config_.memory_channels));
  const unsigned bg_bits = static_cast<unsigned>(std::countr_zero(d.bank_groups));
  const unsigned col_bits = static_cast<unsigned>(std::countr_zero(d.row_bytes / 32));
  const unsigned ba_bits = static_cast<unsigned>(std::countr_zero(d.banks_per_group));
  const std::uint64_t local = ((a >> (il + ch_bits)) << il) | (a & ((1ull << il) - 1));
  DramLocation at;
  at.channel = static_cast<unsigned>((a >> il) & (config_.memory_channels - 1));
  at.word = local >> 5;
  at.group = static_cast<unsigned>(at.word & (d.bank_groups - 1));
  at.bank = static_cast<unsigned>((at.word >> (bg_bits + col_bits)) & (d.banks_per_group - 1));
  at.row = at.word >> (bg_bits + col_bits + ba_bits);
  at.column = (at.word >> bg_bits) & ((1ull << col_bits) - 1);
  return at;
}

// One requester alone: SharedMemory with the reorder buffer as the only limit besides credits.
MemoryTimingResult MemoryTimingModel::Run(std::span<const MemoryAccess> accesses,
                                          std::uint64_t in_flight_limit, std::uint64_t credit_delay) const {
  MemoryTimingResult result;
  if (accesses.empty()) return result;
  MemoryTimingOptions options = options_;
  options.arbiter_outstanding = options.rob_depth;
  SharedMemory memory(config_, options, {});
  MemoryStream stream{0, 0, {accesses.begin(), accesses.end()}, in_flight_limit};
  stream.credit_delay = credit_delay;
  stream.record = true;
  memory.Add(std::move(stream));
  while (memory.Step()) {
  }
  const std::vector<std::int64_t>& accepted = memory.Accepts(0);
  const std::vector<std::int64_t>& answered = memory.Responses(0);
  for (std::size_t k = 0; k < accesses.size(); ++k) {
    result.latencies.push_back(static_cast<std::uint64_t>(answered[k] - accepted[k]));
  }
  result.cycles = memory.Timing(0).last_response;
  return result;
}

std::vector<MemoryStreamTiming> MemoryTimingModel::RunStreams(std::span<const MemoryStream> streams,
                                                              std::span<const std::uint64_t> open_rows) const {
  SharedMemory memory(config_, options_, open_rows);
  for (const MemoryStream& stream : streams) memory.Add(stream);
  while (memory.Step()) {
  }
  std::vector<MemoryStreamTiming> timing;
  timing.reserve(streams.size());
  for (std::size_t i = 0; i < streams.size(); ++i) timing.push_back(memory.Timing(i));
  return timing;
}

struct SharedMemory::State {
  // Each requester's streams, in the order added, and where it stands in them.
  struct Requester {
    std::vector<std::size_t> streams;
    std::size_t stream = 0, access = 0;  // the next access to offer
    std::uint64_t in_flight = 0;
    Time free_from = 0;  // its next stream may start: the cycle after its last offer
  };
  // Accepted accesses in request order: (stream, its access index); when each is answered.
  struct Request {
    std::size_t stream, access;
    Time done = -1;
  };

  State(const Config& c, MemoryTimingOptions o)
      : config(c), locate(c), channels(c.memory_channels, Channel(c.dram, o.queue_depth)),
        outstanding(std::min(o.rob_depth, o.arbiter_outstanding)) {}

  Config config;
  MemoryTimingModel locate;
  std::vector<Channel> channels;
  std::size_t outstanding;
  std::vector<MemoryStream> streams;
  std::vector<MemoryStreamTiming> timing;
  std::vector<Requester> requesters;
  std::vector<Request> requests;
  std::size_t head = 0;
  unsigned last_granted = 0;
  Time now = -1;
  std::vector<std::size_t> newly_accepted, newly_answered;
  std::vector<std::vector<std::int64_t>> accepts, responses;  // per stream: recorded streams only
  // Credits on their way back (MemoryStream::credit_delay): the cycle from which the
  // requester may use it again, and the requester.
  struct Returning {
    Time from;
    unsigned requester;
  };
  std::vector<Returning> returning;

  // Skips the streams with no access at the front of a requester's list.
  void SkipEmpty(Requester& r) {
    while (r.stream < r.streams.size() && streams[r.streams[r.stream]].accesses.empty()) ++r.stream;
  }
  bool Offering(const Requester& r, Time t) const {
    if (r.stream >= r.streams.size()) return false;
    const MemoryStream& s = streams[r.streams[r.stream]];
    return t >= static_cast<Time>(s.release) && t >= r.free_from && (s.credits == 0 || r.in_flight < s.credits);
  }
  // The next cycle anything can happen: now + 1, or, when nothing is queued, in flight or
  // offered, the next release or refresh; -1 when nothing is left at all.
  Time Next(Time limit) const {
    const Time next = NextEvent();
    if (limit < 0) return next;
    return next < 0 ? std::max(limit, now + 1) : std::min(next, std::max(limit, now + 1));
  }
  Time NextEvent() const {
    const Time t = now + 1;
    const bool busy = head < requests.size() || !returning.empty() ||
                      !std::all_of(channels.begin(), channels.end(), [](const Channel& c) { return c.Quiet(); });
    if (busy) return t;
    Time next = -1;
    for (const Requester& r : requesters) {
      if (r.stream < r.streams.size()) {
        const Time at = std::max<Time>({t, r.free_from, static_cast<Time>(streams[r.streams[r.stream]].release)});
        next = next < 0 ? at : std::min(next, at);
      }
    }
    if (next <= t) return next;
    const Time refresh = (t + config.dram.t_refi - 1) / config.dram.t_refi * config.dram.t_refi;
    return std::min(next, std::max(t, refresh));
  }
};

SharedMemory::SharedMemory(const Config& config, MemoryTimingOptions options,
                           std::span<const std::uint64_t> open_rows)
    : state_(std::make_unique<State>(config, options)) {
  const DramConfig& d = config.dram;
  for (const std::uint64_t address : open_rows) {
    const DramLocation at = state_->locate.Locate(address);
    state_->channels[at.channel].Open(at.group * d.banks_per_group + at.bank, at.row);
  }
}

SharedMemory::~SharedMemory() = default;

std::int64_t SharedMemory::Now() const { return state_->now; }
const MemoryStreamTiming& SharedMemory::Timing(std::size_t stream) const { return state_->timing.at(stream); }
const std::vector<std::size_t>& SharedMemory::NewlyAccepted() const { return state_->newly_accepted; }
const std::vector<std::size_t>& SharedMemory::NewlyAnswered() const { return state_->newly_answered; }

std::size_t SharedMemory::Add(MemoryStream stream) {
  State& s = *state_;
  if (static_cast<Time>(stream.release) <= s.now) {
    throw std::logic_error("SharedMemory: a stream released at a cycle already simulated");
  }
  const std::size_t index = s.streams.size();
  const bool empty = stream.accesses.empty();
  const std::uint64_t release = stream.release;
  if (s.requesters.size() <= stream.requester) s.requesters.resize(stream.requester + 1);
  State::Requester& r = s.requesters[stream.requester];
  s.streams.push_back(std::move(stream));
  s.timing.push_back({});
  MemoryStream& added = s.streams.back();
  added.record = added.record || added.held;
  s.accepts.emplace_back(added.record ? added.accesses.size() : 0, -1);
  s.responses.emplace_back(added.record ? added.accesses.size() : 0, -1);
  if (empty) s.timing.back() = {release, release, release, 0};
  r.streams.push_back(index);
  s.SkipEmpty(r);
  return index;
}

void SharedMemory::Release(unsigned requester, std::uint64_t count) {
  State::Requester& r = state_->requesters.at(requester);
  if (count > r.in_flight) throw std::logic_error("SharedMemory: more credits released than taken");
  r.in_flight -= count;
}

const std::vector<std::int64_t>& SharedMemory::Accepts(std::size_t stream) const { return state_->accepts.at(stream); }

const std::vector<std::int64_t>& SharedMemory::Responses(std::size_t stream) const {
  return state_->responses.at(stream);
}

bool SharedMemory::Step(std::int64_t limit) {
  State& s = *state_;
  s.newly_accepted.clear();
  s.newly_answered.clear();
  const Time now = s.Next(limit);
  if (now < 0) return false;
  s.now = now;
  const DramConfig& d = s.config.dram;
  for (auto& channel : s.channels) {
    std::size_t served = 0;
    Time visible = 0;
    if (channel.Step(now, served, visible)) s.requests[served].done = visible;
  }
  // Credits back from this cycle on.
  std::erase_if(s.returning, [&](const State::Returning& r) {
    if (r.from > now) return false;
    --s.requesters[r.requester].in_flight;
    return true;
  });
  // The arbiter: the first requester offering after the one granted last.
  const auto ports = static_cast<unsigned>(s.requesters.size());
  int granted = -1;
  if (s.requests.size() - s.head < s.outstanding) {
    for (unsigned k = 1; k <= ports; ++k) {
      const unsigned port = (s.last_granted + k) % ports;
      State::Requester& r = s.requesters[port];
      if (!s.Offering(r, now)) continue;
      const std::size_t stream = r.streams[r.stream];
      const MemoryAccess& access = s.streams[stream].accesses[r.access];
      const DramLocation at = s.locate.Locate(access.address);
      Channel& channel = s.channels[at.channel];
      if (channel.Full()) break;  // granted, not taken: the port waits
      granted = static_cast<int>(port);
      channel.Push({access.write, at.group * d.banks_per_group + at.bank, at.group, at.row, at.column, at.word,
                    s.requests.size()});
      s.requests.push_back({stream, r.access});
      ++r.in_flight;
      s.last_granted = port;
      s.timing[stream].last_accept = static_cast<std::uint64_t>(now);
      if (s.streams[stream].record) s.accepts[stream][r.access] = now;
      if (++r.access == s.streams[stream].accesses.size()) {
        r.access = 0;
        ++r.stream;
        r.free_from = now + 1;
        s.SkipEmpty(r);
        s.newly_accepted.push_back(stream);
      }
      break;
    }
  }
  for (unsigned port = 0; port < ports; ++port) {
    State::Requester& r = s.requesters[port];
    if (static_cast<int>(port) != granted && s.Offering(r, now)) ++s.timing[r.streams[r.stream]].refused;
  }
  // One response per cycle, in request order.
  if (s.head < s.requests.size() && s.requests[s.head].done >= 0 && s.requests[s.head].done <= now) {
    const State::Request& q = s.requests[s.head++];
    if (s.streams[q.stream].record) s.responses[q.stream][q.access] = now;
    const MemoryStream& answered = s.streams[q.stream];  // a held stream's credit comes with Release
    if (!answered.held && answered.credit_delay == 0) {
      --s.requesters[answered.requester].in_flight;
    } else if (!answered.held) {
      s.returning.push_back({now + 1 + static_cast<Time>(answered.credit_delay), answered.requester});
    }
    MemoryStreamTiming& t = s.timing[q.stream];
    if (q.access == 0) t.first_response = static_cast<std::uint64_t>(now);
    if (q.access + 1 == s.streams[q.stream].accesses.size()) {
      t.last_response = static_cast<std::uint64_t>(now);
      s.newly_answered.push_back(q.stream);
    }
  }
  return true;
}

}  // namespace systole::model
