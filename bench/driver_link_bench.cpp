// The tcp:// link against the socket it runs on, measured in the same run on loopback:
//   - throughput: Buffer::Write/Read of a large buffer through `systole serve` (hosting ref)
//     beside a raw socket copy of the same bytes (one write, the peer reads them all, acks);
//   - latency: one register read (a request and its reply) beside a raw ping-pong of the same
//     frame size.
// The goal (docs/PROTOCOL.md): bulk transfers at >= 80% of the raw copy.
#include <benchmark/benchmark.h>

#include <utility>  // before Asio: Boost 1.74's awaitable.hpp uses std::exchange without it
#include <boost/asio.hpp>
#include <thread>

#include "systole/device.hpp"
#include "systole/protocol.hpp"
#include "systole/server.hpp"

namespace {

namespace asio = boost::asio;
using asio::ip::tcp;

// A loopback socket pair with a peer thread that either swallows `bytes` and acks, or echoes
// fixed-size messages.
class RawPeer {
 public:
  enum class Mode { kSink, kEcho };
  RawPeer(Mode mode, std::size_t message_bytes)
      : acceptor_(io_, tcp::endpoint(asio::ip::address_v4::loopback(), 0)), client_(io_) {
    std::thread accept([&] {
      tcp::socket peer = acceptor_.accept();
      peer.set_option(tcp::no_delay(true));
      peer_ = std::thread([this, mode, message_bytes, socket = std::move(peer)]() mutable {
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
  tcp::socket& client() { return client_; }

 private:
  static void Serve(tcp::socket socket, Mode mode, std::size_t message_bytes) {
    std::vector<std::uint8_t> buffer(mode == Mode::kSink ? 1u << 20 : message_bytes);
    boost::system::error_code error;
    for (;;) {
      if (mode == Mode::kEcho) {
        asio::read(socket, asio::buffer(buffer), error);
        if (error) return;
        asio::write(socket, asio::buffer(buffer), error);
        if (error) return;
        continue;
      }
      std::uint64_t total = 0;  // sink: an 8-byte length, then that many bytes, then an ack
      asio::read(socket, asio::buffer(&total, sizeof total), error);
      if (error) return;
      for (std::uint64_t got = 0; got < total;) {
        got += socket.read_some(asio::buffer(buffer.data(), std::min<std::uint64_t>(buffer.size(), total - got)), error);
        if (error) return;
      }
      const std::uint8_t ack = 1;
      asio::write(socket, asio::buffer(&ack, 1), error);
    }
  }

  asio::io_context io_;
  tcp::acceptor acceptor_;
  tcp::socket client_;
  std::thread peer_;
};

void BM_RawSocketCopy(benchmark::State& state) {
  const auto bytes = static_cast<std::uint64_t>(state.range(0));
  std::vector<std::uint8_t> data(bytes, 0x5A);
  RawPeer peer(RawPeer::Mode::kSink, 0);
  for (auto _ : state) {
    asio::write(peer.client(), asio::buffer(&bytes, sizeof bytes));
    asio::write(peer.client(), asio::buffer(data));
    std::uint8_t ack = 0;
    asio::read(peer.client(), asio::buffer(&ack, 1));
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes));
}

struct Remote {
  systole::DeviceServer server;
  systole::Device device;
  Remote()
      : server(systole::OpenRefLink(systole::LoadConfig("small")), Options()),
        device(systole::Device::Open("tcp://" + server.endpoint(), systole::LoadConfig("small"))) {}
  static systole::ServerOptions Options() {
    systole::ServerOptions options;
    options.port = 0;
    return options;
  }
};

void BM_TcpLinkWrite(benchmark::State& state) {
  const auto bytes = static_cast<std::uint64_t>(state.range(0));
  std::vector<std::uint8_t> data(bytes, 0x5A);
  Remote remote;
  systole::Buffer buffer = remote.device.Allocate(bytes);
  buffer.Write(data);  // the model allocates its pages on the first write: not measured
  for (auto _ : state) buffer.Write(data);
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes));
}

void BM_TcpLinkRead(benchmark::State& state) {
  const auto bytes = static_cast<std::uint64_t>(state.range(0));
  std::vector<std::uint8_t> data(bytes, 0x5A);
  Remote remote;
  systole::Buffer buffer = remote.device.Allocate(bytes);
  buffer.Write(data);
  for (auto _ : state) buffer.Read(data);
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes));
}

// A request and a reply of register-access size, as frames of the protocol would be.
void BM_RawPingPong(benchmark::State& state) {
  constexpr std::size_t kFrame = systole::protocol::kHeaderBytes + 4;
  RawPeer peer(RawPeer::Mode::kEcho, kFrame);
  std::array<std::uint8_t, kFrame> message{};
  for (auto _ : state) {
    asio::write(peer.client(), asio::buffer(message));
    asio::read(peer.client(), asio::buffer(message));
  }
}

void BM_TcpLinkReadRegister(benchmark::State& state) {
  Remote remote;
  systole::Link& link = remote.device.link();
  for (auto _ : state) benchmark::DoNotOptimize(link.ReadRegister(0));
}

constexpr std::int64_t kLarge = 64 << 20;
BENCHMARK(BM_RawSocketCopy)->Arg(kLarge)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_TcpLinkWrite)->Arg(kLarge)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_TcpLinkRead)->Arg(kLarge)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_RawPingPong)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_TcpLinkReadRegister)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
