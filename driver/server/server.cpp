// DeviceServer: the TCP side. One io_context on one thread accepts clients and moves frames
// (connection.hpp); the DeviceHost's worker does everything else.
//
// Connections that have not been greeted yet are kept in a list: when one more arrives than
// max_pending allows, the oldest that has sent no HELLO is dropped (the oldest of all if every
// one has: they wait for their wrong token's answer). Silent connections then cost a client with the
// token nothing (it says HELLO at once, and is no longer pending), and max_clients counts
// greeted clients only, at HELLO (device_host_requests.cpp).
#include <fmt/format.h>

#include <utility>  // before Asio: Boost 1.74's awaitable.hpp uses std::exchange without it
#include <boost/asio.hpp>
#include <algorithm>
#include <chrono>
#include <future>
#include <list>
#include <mutex>

#include "driver/server/connection.hpp"
#include "driver/server/device_host.hpp"
#include "systole/server.hpp"

namespace systole {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;

asio::ip::address ParseAddress(const std::string& address) {
  if (address == "localhost") return asio::ip::address_v4::loopback();
  boost::system::error_code error;
  const asio::ip::address parsed = asio::ip::make_address(address, error);
  if (error) {
    throw ServerError(fmt::format("'{}' is not an IP address (use e.g. 127.0.0.1, ::1, 0.0.0.0)",
                                  address));
  }
  return parsed;
}

// Every limit must leave the server usable: errors name the option and its value.
void Validate(const ServerOptions& options) {
  auto fail = [](std::string_view what) { throw ServerError(std::string(what)); };
  if (options.max_payload < kMinMaxPayload || options.max_payload > (1u << 30)) {
    fail(fmt::format("max_payload {} is outside {}..{} bytes", options.max_payload,
                     kMinMaxPayload, 1u << 30));
  }
  if (options.max_clients == 0) fail("max_clients 0: no client could connect");
  if (options.max_pending == 0) fail("max_pending 0: no connection could say HELLO");
  if (options.max_allocation_bytes && *options.max_allocation_bytes == 0) {
    fail("max_allocation_bytes 0: no client could allocate");
  }
  for (const auto& [name, value] : {std::pair{"hello_timeout", options.hello_timeout},
                                    std::pair{"idle_timeout", options.idle_timeout},
                                    std::pair{"launch_timeout", options.launch_timeout}}) {
    if (value.count() <= 0) fail(fmt::format("{} {} ms: must be positive", name, value.count()));
  }
  if (options.auth_failure_delay.count() < 0) {
    fail(fmt::format("auth_failure_delay {} ms: must not be negative",
                     options.auth_failure_delay.count()));
  }
}

}  // namespace

struct DeviceServer::Impl {
  Impl(std::unique_ptr<Link> device, ServerOptions server_options)
      : options(std::move(server_options)), host(std::move(device), options), acceptor(io) {}

  void Accept() {
    acceptor.async_accept([this](boost::system::error_code error, tcp::socket socket) {
      if (error) {
        if (error == asio::error::operation_aborted) return;
        return Accept();
      }
      boost::system::error_code ignored;
      socket.set_option(tcp::no_delay(true), ignored);
      auto connection =
          std::make_shared<server::Connection>(std::move(socket), host, ++next_id, options);
      pending.remove_if([](const std::weak_ptr<server::Connection>& weak) {
        const auto c = weak.lock();
        return !c || c->closed() || c->greeted();
      });
      if (pending.size() >= options.max_pending) {
        auto victim = std::find_if(pending.begin(), pending.end(), [](const auto& weak) {
          const auto c = weak.lock();
          return c && !c->hello_received();
        });
        if (victim == pending.end()) victim = pending.begin();
        if (auto dropped = victim->lock()) dropped->Drop();
        pending.erase(victim);
      }
      pending.push_back(connection);
      live.remove_if([](const std::weak_ptr<server::Connection>& weak) {
        const auto c = weak.lock();
        return !c || c->closed();
      });
      live.push_back(connection);
      connection->Start();
      Accept();
    });
  }

  ServerOptions options;
  server::DeviceHost host;
  asio::io_context io;
  tcp::acceptor acceptor;
  tcp::endpoint bound;  // where it listens (still answered by endpoint() after Stop)
  // On the I/O thread: stop accepting and hang up on every client (Stop).
  void CloseAll() {
    boost::system::error_code ignored;
    acceptor.close(ignored);
    for (const auto& weak : live) {
      if (const auto c = weak.lock()) c->Drop();
    }
    live.clear();
    pending.clear();
  }

  std::list<std::weak_ptr<server::Connection>> pending;  // not greeted yet, oldest first
  std::list<std::weak_ptr<server::Connection>> live;     // every connection not known closed
  std::uint64_t next_id = 0;
  std::thread io_thread;
  std::mutex stop_mutex;
  std::condition_variable stopped_cv;
  bool stopped = false;
};

DeviceServer::DeviceServer(std::unique_ptr<Link> device, ServerOptions options) {
  Validate(options);
  const asio::ip::address address = ParseAddress(options.address);
  if (!address.is_loopback() && options.token.empty()) {
    throw ServerError(fmt::format(
        "refusing to listen on {} without a token: anyone who can reach it could use the "
        "device. Pass --token-file FILE (clients send the token from SYSTOLE_TOKEN or "
        "SYSTOLE_TOKEN_FILE), or listen on 127.0.0.1",
        options.address));
  }
  impl_ = std::make_unique<Impl>(std::move(device), std::move(options));
  try {
    const tcp::endpoint endpoint(address, impl_->options.port);
    impl_->acceptor.open(endpoint.protocol());
    impl_->acceptor.set_option(tcp::acceptor::reuse_address(true));
    impl_->acceptor.bind(endpoint);
    impl_->acceptor.listen();
    impl_->bound = impl_->acceptor.local_endpoint();
  } catch (const boost::system::system_error& error) {
    impl_->host.Stop();
    throw ServerError(fmt::format("cannot listen on {}:{}: {}", impl_->options.address,
                                  impl_->options.port, error.code().message()));
  }
  impl_->Accept();
  impl_->io_thread = std::thread([this] { impl_->io.run(); });
}

DeviceServer::~DeviceServer() { Stop(); }

std::uint16_t DeviceServer::port() const { return impl_->bound.port(); }

std::string DeviceServer::endpoint() const {
  const tcp::endpoint& local = impl_->bound;
  const std::string host = local.address().to_string();
  return local.address().is_v6() ? fmt::format("[{}]:{}", host, local.port())
                                  : fmt::format("{}:{}", host, local.port());
}

std::uint32_t DeviceServer::clients() const { return impl_->host.sessions(); }
std::uint64_t DeviceServer::launches() const { return impl_->host.launches(); }

void DeviceServer::Wait() {
  std::unique_lock lock(impl_->stop_mutex);
  impl_->stopped_cv.wait(lock, [this] { return impl_->stopped; });
}

void DeviceServer::Stop() {
  {
    std::lock_guard lock(impl_->stop_mutex);
    if (impl_->stopped) return;
    impl_->stopped = true;
  }
  // The worker first: after it stops nothing posts to the io_context any more. Then, on the I/O
  // thread (connections are its alone), the port closes and every client is hung up on, so
  // clients see the end now rather than when this object goes.
  // (Should the I/O thread have ended already, the handler never runs and this thread closes
  // them once it has joined.)
  impl_->host.Stop();
  std::promise<void> closed;
  std::future<void> done = closed.get_future();
  asio::post(impl_->io, [this, &closed] {
    impl_->CloseAll();
    closed.set_value();
  });
  const bool closed_there = done.wait_for(std::chrono::seconds(5)) == std::future_status::ready;
  impl_->io.stop();
  if (impl_->io_thread.joinable()) impl_->io_thread.join();
  if (!closed_there) impl_->CloseAll();
  impl_->stopped_cv.notify_all();
}

}  // namespace systole
