// The tcp:// link against the loopback socket it runs on, both measured in the same run.
//
//   BM_Write / BM_Read: Buffer::Write/Read of a large buffer through a DeviceServer in this
//     process, interleaved iteration by iteration with a raw socket copy of the same bytes in
//     the same direction (one write of everything, the peer reads it all). Counters: each
//     side's throughput and `vs_raw`, the link's share of the raw copy's throughput. The goal
//     (docs/PROTOCOL.md) is vs_raw >= 0.8. Interleaving matters on a shared machine: load
//     that comes and goes hits both sides alike, so the ratio is steadier than either figure.
//     `cpu_vs_raw` compares the CPU time all threads of this process spent on each side (the
//     raw copy's two threads, the link's client, server and device threads): what each byte
//     costs, whatever the machine's load does to wall-clock time.
//     Two devices: `ref` (the golden model: its memory write is part of the cost) and
//     `null` (registers from ref, memory accesses do nothing): the transport alone.
//   BM_RoundTrip: a register read (request and reply, 24-byte frames) interleaved with a raw
//     ping-pong of 24-byte messages. Counters: both round trips in µs and their ratio.
#include <benchmark/benchmark.h>

#include <utility>  // before Asio: Boost 1.74's awaitable.hpp uses std::exchange without it
#include <boost/asio.hpp>
#include <chrono>
#include <ctime>
#include <thread>

#include "systole/device.hpp"
#include "systole/protocol.hpp"
#include "systole/server.hpp"

namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using Clock = std::chrono::steady_clock;

// A loopback connection to a peer thread. Bulk mode: the client sends a u64 command, bit 63
// set for "send me this many bytes", clear for "take this many bytes and ack with one byte".
// Echo mode: the peer returns every `message_bytes` it gets.
class RawPeer {
 public:
  enum class Mode { kBulk, kEcho };
  RawPeer(Mode mode, std::size_t message_bytes)
      : acceptor_(io_, tcp::endpoint(asio::ip::address_v4::loopback(), 0)), client_(io_) {
    std::thread accept([&] {
      tcp::socket peer = acceptor_.accept();
      peer.set_option(tcp::no_delay(true));
      peer_ = std::thread([mode, message_bytes, socket = std::move(peer)]() mutable {
        Serve(std::move(socket), mode, message_bytes);
      });
    });
    client_.connect(acceptor_.local_endpoint());
    client_.set_option(tcp::no_delay(true));
    accept.join();
  }
  ~RawPeer() {
    boost::system::error_code ignored;
    client_.shutdown(tcp::socket::shutdown_both, ignored);
    client_.close(ignored);
    peer_.join();
  }

  void Send(std::span<const std::uint8_t> data) {
    const std::uint64_t command = data.size();
    asio::write(client_, asio::buffer(&command, sizeof command));
    asio::write(client_, asio::buffer(data.data(), data.size()));
    std::uint8_t ack = 0;
    asio::read(client_, asio::buffer(&ack, 1));
  }
  void Receive(std::span<std::uint8_t> data) {
    const std::uint64_t command = data.size() | (std::uint64_t{1} << 63);
    asio::write(client_, asio::buffer(&command, sizeof command));
    asio::read(client_, asio::buffer(data.data(), data.size()));
  }
  void PingPong(std::span<std::uint8_t> message) {
    asio::write(client_, asio::buffer(message.data(), message.size()));
    asio::read(client_, asio::buffer(message.data(), message.size()));
  }

 private:
  static void Serve(tcp::socket socket, Mode mode, std::size_t message_bytes) {
    std::vector<std::uint8_t> buffer(mode == Mode::kBulk ? 1u << 20 : message_bytes, 0x5A);
    std::vector<std::uint8_t> source;  // what a bulk receive sends, kept between commands
    boost::system::error_code error;
    while (!error) {
      if (mode == Mode::kEcho) {
        asio::read(socket, asio::buffer(buffer), error);
        if (!error) asio::write(socket, asio::buffer(buffer), error);
        continue;
      }
      std::uint64_t command = 0;
      asio::read(socket, asio::buffer(&command, sizeof command), error);
      if (error) return;
      const std::uint64_t bytes = command & ~(std::uint64_t{1} << 63);
      if ((command >> 63) != 0) {
        source.resize(bytes, 0x5A);
        asio::write(socket, asio::buffer(source.data(), bytes), error);
        continue;
      }
      for (std::uint64_t got = 0; got < bytes && !error;) {
        got += socket.read_some(
            asio::buffer(buffer.data(), std::min<std::uint64_t>(buffer.size(), bytes - got)), error);
      }
      const std::uint8_t ack = 1;
      if (!error) asio::write(socket, asio::buffer(&ack, 1), error);
    }
  }

  asio::io_context io_;
  tcp::acceptor acceptor_;
  tcp::socket client_;
  std::thread peer_;
};

// A device whose memory does nothing: what is left of a transfer is the transport itself.
class NullMemoryLink final : public systole::Link {
 public:
  explicit NullMemoryLink(std::unique_ptr<systole::Link> registers) : registers_(std::move(registers)) {}
  std::string_view Uri() const override { return "null"; }
  std::uint32_t ReadRegister(std::uint32_t offset) override { return registers_->ReadRegister(offset); }
  void WriteRegister(std::uint32_t offset, std::uint32_t value) override {
    registers_->WriteRegister(offset, value);
  }
  void WriteMemory(std::uint64_t, std::span<const std::uint8_t>) override {}
  void ReadMemory(std::uint64_t, std::span<std::uint8_t>) override {}
  bool WaitForInterrupt(std::chrono::milliseconds timeout) override {
    return registers_->WaitForInterrupt(timeout);
  }

 private:
  std::unique_ptr<systole::Link> registers_;
};

enum class Hosted { kRef, kNull };

struct Remote {
  systole::DeviceServer server;
  systole::Device device;
  explicit Remote(Hosted hosted)
      : server(Open(hosted), Options()),
        device(systole::Device::Open("tcp://" + server.endpoint(), systole::LoadConfig("small"))) {}
  static std::unique_ptr<systole::Link> Open(Hosted hosted) {
    auto ref = systole::OpenRefLink(systole::LoadConfig("small"));
    if (hosted == Hosted::kRef) return ref;
    return std::make_unique<NullMemoryLink>(std::move(ref));
  }
  static systole::ServerOptions Options() {
    systole::ServerOptions options;
    options.port = 0;
    return options;
  }
};

double Seconds(Clock::duration duration) { return std::chrono::duration<double>(duration).count(); }

// CPU time of every thread of this process, in seconds.
double ProcessCpuSeconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

struct Spent {
  Clock::duration wall{};
  double cpu = 0;
};

template <class F>
Clock::duration Timed(F&& work, Spent& spent) {
  const double cpu = ProcessCpuSeconds();
  const auto start = Clock::now();
  work();
  const auto wall = Clock::now() - start;
  spent.wall += wall;
  spent.cpu += ProcessCpuSeconds() - cpu;
  return wall;
}

// One iteration: the raw copy, then the link's transfer; the link's time is the iteration's.
void Transfer(benchmark::State& state, Hosted hosted, bool write) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  std::vector<std::uint8_t> data(bytes, 0x5A);
  Remote remote(hosted);
  RawPeer raw(RawPeer::Mode::kBulk, 0);
  systole::Buffer buffer = remote.device.Allocate(bytes);
  buffer.Write(data);  // the model allocates its pages on the first write: not measured
  buffer.Read(data);
  raw.Send(data);      // and the peer its source buffer
  raw.Receive(data);
  Spent raw_spent, link_spent;
  for (auto _ : state) {
    Timed([&] { write ? raw.Send(data) : raw.Receive(data); }, raw_spent);
    const auto link = Timed([&] { write ? buffer.Write(data) : buffer.Read(data); }, link_spent);
    state.SetIterationTime(Seconds(link));
  }
  const double total = static_cast<double>(bytes) * static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<std::int64_t>(total));
  state.counters["link_GBps"] = total / Seconds(link_spent.wall) / 1e9;
  state.counters["raw_GBps"] = total / Seconds(raw_spent.wall) / 1e9;
  state.counters["vs_raw"] = Seconds(raw_spent.wall) / Seconds(link_spent.wall);
  state.counters["cpu_vs_raw"] = raw_spent.cpu / link_spent.cpu;
}

void BM_Write(benchmark::State& state, Hosted hosted) { Transfer(state, hosted, true); }
void BM_Read(benchmark::State& state, Hosted hosted) { Transfer(state, hosted, false); }

// Interleaved in batches, so that each batch pays one clock read per side.
void BM_RoundTrip(benchmark::State& state) {
  constexpr std::size_t kFrame = systole::protocol::kHeaderBytes + 4;  // READ_REGISTER's size
  constexpr int kBatch = 16;
  Remote remote(Hosted::kRef);
  systole::Link& link = remote.device.link();
  RawPeer raw(RawPeer::Mode::kEcho, kFrame);
  std::array<std::uint8_t, kFrame> message{};
  Spent raw_spent, link_spent;
  for (auto _ : state) {
    Timed([&] {
      for (int i = 0; i < kBatch; ++i) raw.PingPong(message);
    }, raw_spent);
    const auto batch = Timed([&] {
      for (int i = 0; i < kBatch; ++i) benchmark::DoNotOptimize(link.ReadRegister(0));
    }, link_spent);
    state.SetIterationTime(Seconds(batch) / kBatch);
  }
  const double trips = static_cast<double>(state.iterations()) * kBatch;
  state.counters["link_us"] = Seconds(link_spent.wall) / trips * 1e6;
  state.counters["raw_us"] = Seconds(raw_spent.wall) / trips * 1e6;
  // Both > 1: the link is that many times slower (costlier) than a raw ping-pong.
  state.counters["vs_raw"] = Seconds(link_spent.wall) / Seconds(raw_spent.wall);
  state.counters["cpu_vs_raw"] = link_spent.cpu / raw_spent.cpu;
}

void Sizes(benchmark::internal::Benchmark* benchmark) {
  for (std::int64_t mib : {1, 16, 64}) benchmark->Arg(mib << 20);
  benchmark->Unit(benchmark::kMillisecond)->UseManualTime()->MinTime(1.0);
}
BENCHMARK_CAPTURE(BM_Write, ref, Hosted::kRef)->Apply(Sizes);
BENCHMARK_CAPTURE(BM_Read, ref, Hosted::kRef)->Apply(Sizes);
BENCHMARK_CAPTURE(BM_Write, null, Hosted::kNull)->Apply(Sizes);
BENCHMARK_CAPTURE(BM_Read, null, Hosted::kNull)->Apply(Sizes);
BENCHMARK(BM_RoundTrip)->Unit(benchmark::kMicrosecond)->UseManualTime();

}  // namespace

BENCHMARK_MAIN();
