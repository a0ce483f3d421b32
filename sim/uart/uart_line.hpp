// A serial line at the bit level, in clock cycles: the C++ reference of rtl/host/systole_uart*.
//
//   LineDriver    what a host's UART puts on a line: 8N1 frames at a bit period given as a
//                 fraction of cycles (so a host a few per cent off the board's baud is exact),
//                 with idle gaps, a stop bit forced low (a framing error), a break, or a glitch.
//   RxReference   systole_uart_rx, register for register: the two-flop synchronizer, the
//                 mid-bit sampling, the framing-error and break handling. Fed the line as the
//                 RTL samples it at each rising edge, it gives the same pulses in the same cycle.
//   TxReference   systole_uart_tx, register for register: the line it drives and when it is
//                 ready for the next byte.
//
// The RTL unit test (tests/rtl/host/uart_test.cpp) checks the RTL against these cycle by cycle;
// the pty board (sim/uart/pty_board.hpp) uses LineDriver and RxReference as the host's UART.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>

namespace systole::uart {

// One 8N1 frame (or line event) for LineDriver.
struct LineFrame {
  std::uint8_t data = 0;
  bool stop_low = false;            // the stop bit sent low: a framing error at the receiver
  std::uint64_t gap_before = 0;     // idle cycles before the start bit
  std::uint64_t low_cycles = 0;     // > 0: not a byte but the line held low this long (a break
                                    // when longer than a frame, a glitch when shorter than a bit)
};

class LineDriver {
 public:
  // Bit period = numerator / denominator cycles (e.g. 16/1; 1600/97 is 3 % fast).
  LineDriver(std::uint64_t numerator, std::uint64_t denominator)
      : num_(numerator), den_(denominator) {}

  void Push(const LineFrame& frame) { frames_.push_back(frame); }
  void PushByte(std::uint8_t data) { Push({.data = data}); }
  bool Idle() const { return frames_.empty() && !active_; }
  std::size_t Queued() const { return frames_.size() + (active_ ? 1 : 0); }

  // The line level during the coming cycle; call Advance() once per cycle after reading it.
  bool Line() {
    Start();
    if (!active_ || waiting_ > 0) return true;
    const LineFrame& f = current_;
    if (f.low_cycles > 0) return false;
    const std::uint64_t bit = BitAt(elapsed_);
    if (bit == 0) return false;                                // start bit
    if (bit <= 8) return ((f.data >> (bit - 1)) & 1u) != 0;   // data, LSB first
    return !f.stop_low;                                        // stop bit
  }

  void Advance() {
    Start();
    if (!active_) return;
    if (waiting_ > 0) {
      --waiting_;
      return;
    }
    ++elapsed_;
    const std::uint64_t length =
        current_.low_cycles > 0 ? current_.low_cycles : (10 * num_) / den_;
    if (elapsed_ >= length) active_ = false;
  }

 private:
  void Start() {
    if (active_ || frames_.empty()) return;
    current_ = frames_.front();
    frames_.pop_front();
    active_ = true;
    waiting_ = current_.gap_before;
    elapsed_ = 0;
  }
  // Bit k covers cycles [floor(k·num/den), floor((k+1)·num/den)) of the frame.
  std::uint64_t BitAt(std::uint64_t cycle) const {
    std::uint64_t bit = (cycle * den_) / num_;
    while (bit > 0 && (bit * num_) / den_ > cycle) --bit;
    while (((bit + 1) * num_) / den_ <= cycle) ++bit;
    return bit;
  }

  std::uint64_t num_, den_;
  std::deque<LineFrame> frames_;
  LineFrame current_;
  bool active_ = false;
  std::uint64_t waiting_ = 0;
  std::uint64_t elapsed_ = 0;
};

// systole_uart_rx's registers and next-state logic.
class RxReference {
 public:
  explicit RxReference(unsigned clks_per_bit) : clks_(clks_per_bit) {}

  // One rising edge with `line` on uart_rx_i.
  void Edge(bool line) {
    State state = state_;
    unsigned count = count_ + 1, bit = bit_;
    std::uint8_t shift = shift_;
    bool valid = false, error = false;
    switch (state_) {
      case State::kIdle:
        count = 0;
        if (!sync_) state = State::kStart;
        break;
      case State::kStart:
        if (count_ == clks_ / 2 - 1) {
          count = 0;
          bit = 0;
          state = sync_ ? State::kIdle : State::kData;
        }
        break;
      case State::kData:
        if (count_ == clks_ - 1) {
          count = 0;
          shift = static_cast<std::uint8_t>((sync_ ? 0x80 : 0) | (shift_ >> 1));
          bit = (bit_ + 1) & 7;
          if (bit_ == 7) state = State::kStop;
        }
        break;
      case State::kStop:
        if (count_ == clks_ - 1) {
          count = 0;
          valid = sync_;
          error = !sync_;
          state = sync_ ? State::kIdle : State::kBreak;
        }
        break;
      case State::kBreak:
        count = 0;
        if (sync_) state = State::kIdle;
        break;
    }
    sync_ = meta_;
    meta_ = line;
    state_ = state;
    count_ = count;
    bit_ = bit;
    shift_ = shift;
    valid_ = valid;
    error_ = error;
  }

  bool valid() const { return valid_; }  // the byte in data() arrived at the last edge
  std::uint8_t data() const { return shift_; }
  bool frame_error() const { return error_; }

 private:
  enum class State { kIdle, kStart, kData, kStop, kBreak };
  unsigned clks_;
  bool meta_ = true, sync_ = true;
  State state_ = State::kIdle;
  unsigned count_ = 0, bit_ = 0;
  std::uint8_t shift_ = 0;
  bool valid_ = false, error_ = false;
};

// systole_uart_tx's registers and next-state logic.
class TxReference {
 public:
  explicit TxReference(unsigned clks_per_bit) : clks_(clks_per_bit) {}

  // Whether a byte offered now is taken at the next edge.
  bool ready() const { return !busy_ || (left_ == 0 && count_ == clks_ - 1); }
  bool line() const { return line_; }

  // One rising edge; `offer` is the byte on valid_i/data_i, if any. Returns whether it was taken.
  bool Edge(std::optional<std::uint8_t> offer) {
    const bool take = offer.has_value() && ready();
    bool busy = busy_, line = line_;
    unsigned shift = shift_, left = left_, count = count_ + 1;
    if (busy_ && count_ == clks_ - 1) {
      count = 0;
      if (left_ == 0) {
        busy = false;
        line = true;
      } else {
        line = (shift_ & 1u) != 0;
        shift = 0x100u | (shift_ >> 1);
        left = left_ - 1;
      }
    }
    if (take) {
      busy = true;
      line = false;
      shift = 0x100u | *offer;
      left = 9;
      count = 0;
    }
    busy_ = busy;
    line_ = line;
    shift_ = shift;
    left_ = left;
    count_ = count;
    return take;
  }

 private:
  unsigned clks_;
  bool busy_ = false, line_ = true;
  unsigned shift_ = 0x1FF, left_ = 0, count_ = 0;
};

}  // namespace systole::uart
