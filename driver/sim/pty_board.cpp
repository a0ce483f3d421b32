// PtyBoard: see pty_board.hpp.
#include "driver/sim/pty_board.hpp"

#include <fmt/format.h>

#include <array>
#include <future>
#include <vector>

#include "driver/sim/sim_links.hpp"
#include "driver/sim/uart_board.hpp"
#include "sim/rtl/built_models.hpp"
#include "sim/uart/uart_line.hpp"
#include "systole/link.hpp"
#include "systole/protocol.hpp"

namespace systole::serial {

using Make = std::unique_ptr<UartBoard> (*)(const Config&);

// Defined in the generated <model>_glue.cpp files (systole_verilate_configs).
#define SYSTOLE_SERIAL_SIM_MODEL(name, model) std::unique_ptr<UartBoard> Make_##model(const Config&);
#include "serial_board_configs.inc"
#undef SYSTOLE_SERIAL_SIM_MODEL

namespace {

Make FindBoard(const Config& config) {
  static constexpr rtl::BuiltModel<Make> kBuilt[] = {
#define SYSTOLE_SERIAL_SIM_MODEL(name, model) {name, &Make_##model},
#include "serial_board_configs.inc"
#undef SYSTOLE_SERIAL_SIM_MODEL
  };
  try {
    return rtl::FindBuiltModel<Make>(kBuilt, config, "serial+sim", "SYSTOLE_SERIAL_SIM_CONFIGS");
  } catch (const std::invalid_argument& error) {
    throw LinkError("serial+sim", error.what());
  }
}

// Counts the frames going one way through the line, to know when every request has its reply.
// Garbage restarts the count's decoder; the bridge answers garbage too, so a reply still comes.
class FrameCounter {
 public:
  void Feed(std::span<const std::uint8_t> bytes) {
    decoder_.Feed(bytes);
    protocol::Frame frame;
    for (;;) {
      const auto status = decoder_.Next(frame);
      if (status == protocol::FrameDecoder::Status::kFrame) {
        ++frames_;
      } else {
        if (status == protocol::FrameDecoder::Status::kError) decoder_ = protocol::FrameDecoder();
        return;
      }
    }
  }
  std::uint64_t frames() const { return frames_; }

 private:
  protocol::FrameDecoder decoder_;
  std::uint64_t frames_ = 0;
};

}  // namespace

PtyBoard::PtyBoard(const Config& config)
    : PtyBoard([make = FindBoard(config), config] { return make(config); },
               config.clock_mhz * 1e6) {}

PtyBoard::PtyBoard(MakeBoard make, double clock_hz) : clock_hz_(clock_hz) {
  // The model is built, clocked and destroyed on the board's thread (Verilator ties a model's
  // teardown to the thread's context; sim/rtl/verilator_context.hpp).
  std::promise<void> ready;
  std::future<void> started = ready.get_future();
  thread_ = std::thread([this, make = std::move(make), &ready] {
    std::unique_ptr<UartBoard> board;
    try {
      board = make();
      baud_ = board->Baud();
      clocks_per_bit_ = board->ClocksPerBit();
    } catch (...) {
      ready.set_exception(std::current_exception());
      return;
    }
    ready.set_value();  // `ready` is not touched after this: the constructor may have returned
    Run(std::move(board));
  });
  try {
    started.get();
  } catch (...) {
    thread_.join();
    throw;
  }
}

PtyBoard::~PtyBoard() {
  stop_ = true;
  thread_.join();
}

std::string PtyBoard::Uri() const {
  return fmt::format("serial://{}?baud={}", pty_.slave_path(), baud_);
}

void PtyBoard::CheckHealthy() const {
  if (failed_) std::rethrow_exception(failure_);
}

void PtyBoard::Run(std::unique_ptr<UartBoard> board) {
  try {
    const unsigned bit = clocks_per_bit_;
    uart::LineDriver host_line(bit, 1);      // the host's UART, at exactly the board's rate
    uart::RxReference board_line(bit);       // the host's receiver
    FrameCounter requests, replies;
    std::vector<std::uint8_t> to_host;
    std::size_t to_host_sent = 0;
    std::array<std::uint8_t, 512> chunk;
    std::uint64_t quiet = 0;  // cycles since either line was last low (a start or a zero bit)
    const std::uint64_t quiet_enough = 32ull * bit;
    for (std::uint64_t cycle = 0; !stop_; ++cycle) {
      // Once a bit period: take what the host wrote (the line driver queues it) and hand the
      // host what the board sent, as a USB-serial chip's buffers would.
      if (cycle % bit == 0) {
        if (host_line.Queued() < 2) {
          const auto got = std::span(chunk).first(pty_.ReadSome(chunk));
          if (!got.empty() && host_line.Idle()) {
            request_start_.store(cycle, std::memory_order_relaxed);
          }
          for (std::uint8_t byte : got) host_line.PushByte(byte);
          requests.Feed(got);
        }
        if (to_host_sent < to_host.size()) {
          to_host_sent += pty_.WriteSome(std::span(to_host).subspan(to_host_sent));
          if (to_host_sent == to_host.size()) {
            to_host.clear();
            to_host_sent = 0;
          }
        }
        if (quiet >= quiet_enough && host_line.Idle() && to_host.empty() &&
            replies.frames() >= requests.frames()) {
          pty_.WaitReadable(50);  // idle: sleep until the host writes (or stop_ is checked)
        }
      }
      const bool rx = host_line.Line();
      const bool tx = board->Cycle(rx);
      host_line.Advance();
      board_line.Edge(tx);
      if (board_line.valid()) {
        to_host.push_back(board_line.data());
        reply_end_.store(cycle + 1, std::memory_order_relaxed);
        replies.Feed(std::span(to_host).last(1));
      }
      quiet = rx && tx ? quiet + 1 : 0;
      cycles_.store(cycle + 1, std::memory_order_relaxed);
    }
  } catch (...) {
    failure_ = std::current_exception();
    failed_ = true;
  }
  board.reset();
}

namespace {

// serial+sim: the board and the serial:// link to it, the board outliving the link.
class BoardLink final : public Link {
 public:
  BoardLink(std::unique_ptr<PtyBoard> board, std::string_view uri)
      : uri_(uri), board_(std::move(board)), link_(OpenLink(board_->Uri(), Config{})) {}

  std::string_view Uri() const override { return uri_; }
  std::uint32_t ReadRegister(std::uint32_t offset) override {
    return link_->ReadRegister(offset);
  }
  void WriteRegister(std::uint32_t offset, std::uint32_t value) override {
    link_->WriteRegister(offset, value);
  }
  void WriteMemory(std::uint64_t address, std::span<const std::uint8_t> bytes) override {
    link_->WriteMemory(address, bytes);
  }
  void ReadMemory(std::uint64_t address, std::span<std::uint8_t> bytes) override {
    link_->ReadMemory(address, bytes);
  }
  bool WaitForInterrupt(std::chrono::milliseconds timeout) override {
    return link_->WaitForInterrupt(timeout);
  }

 private:
  std::string uri_;
  std::unique_ptr<PtyBoard> board_;
  std::unique_ptr<Link> link_;  // declared after the board: destroyed before it
};

}  // namespace

std::unique_ptr<Link> OpenSerialSimLink(const Config& config, std::string_view uri) {
  return std::make_unique<BoardLink>(std::make_unique<PtyBoard>(config), uri);
}

}  // namespace systole::serial
