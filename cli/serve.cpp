// systole serve: host a device for network clients (docs/PROTOCOL.md). Each client gets its
// own memory and registers; launches take turns. Loopback only unless a token is given.
#include <fmt/core.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <sstream>

#include "arch/config/config.hpp"
#include "cli/commands.hpp"
#include "systole/server.hpp"

namespace systole::cli {
namespace {

struct ServeOptions {
  std::string device = "ref";
  std::string config = std::string(kDefaultConfig);
  std::string listen = "127.0.0.1:7000";
  std::string token_file;
  std::uint32_t max_clients = 64;
  std::uint32_t max_frame_mib = 16;
  std::uint64_t max_client_memory_mib = 0;  // 0: a quarter of device memory
  std::uint32_t launch_timeout_s = 600;
  std::uint32_t idle_timeout_s = 600;
};

std::string ReadToken(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw std::runtime_error(fmt::format("cannot read the token file {}", path));
  std::stringstream text;
  text << file.rdbuf();
  std::string token = text.str();
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) token.pop_back();
  if (token.empty()) throw std::runtime_error(fmt::format("the token file {} is empty", path));
  return token;
}

// "ADDR:PORT", "[v6]:PORT" or ":PORT" (loopback).
void ParseListen(const std::string& listen, ServerOptions& options) {
  const auto colon = listen.rfind(':');
  if (colon == std::string::npos) {
    throw std::runtime_error(fmt::format("--listen {}: expected ADDR:PORT", listen));
  }
  std::string address = listen.substr(0, colon);
  if (address.size() >= 2 && address.front() == '[' && address.back() == ']') {
    address = address.substr(1, address.size() - 2);
  }
  if (!address.empty()) options.address = address;
  try {
    const unsigned long port = std::stoul(listen.substr(colon + 1));
    if (port > 65535) throw std::out_of_range("port");
    options.port = static_cast<std::uint16_t>(port);
  } catch (const std::logic_error&) {
    throw std::runtime_error(fmt::format("--listen {}: the port must be 0..65535", listen));
  }
}

void Serve(const ServeOptions& serve) {
  if (serve.device.starts_with("tcp://")) {
    throw std::runtime_error("a server hosts a device, not another server (--device tcp://…)");
  }
  ServerOptions options;
  ParseListen(serve.listen, options);
  if (!serve.token_file.empty()) options.token = ReadToken(serve.token_file);
  // CLI11 checked the ranges below (ClampedRange), so the shifts cannot wrap.
  options.max_clients = serve.max_clients;
  options.max_payload = serve.max_frame_mib << 20;
  if (serve.max_client_memory_mib != 0) {
    options.max_allocation_bytes = serve.max_client_memory_mib << 20;
  }
  options.launch_timeout = std::chrono::seconds(serve.launch_timeout_s);
  options.idle_timeout = std::chrono::seconds(serve.idle_timeout_s);

  // SIGINT and SIGTERM are taken with sigwait below, so block them before any thread starts.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  const Config config = LoadConfig(serve.config);
  DeviceServer server(OpenLink(serve.device, config), options);
  fmt::print("systole serve: hosting {} ({}: {}x{} {}) at tcp://{}{} — Ctrl-C stops\n",
             serve.device, config.name, config.rows, config.cols, DTypeName(config.dtype),
             server.endpoint(), options.token.empty() ? "" : " (token required)");
  std::fflush(stdout);
  int signal = 0;
  sigwait(&signals, &signal);
  fmt::print("systole serve: stopping ({} launches served)\n", server.launches());
  server.Stop();
}

}  // namespace

void AddServeCommand(CLI::App& app) {
  auto options = std::make_shared<ServeOptions>();
  CLI::App* cmd = app.add_subcommand("serve", "Host a device for network clients (tcp://)");
  cmd->add_option("-d,--device", options->device, "Device to host (ref, …)")->capture_default_str();
  cmd->add_option("-c,--config", options->config, "Configuration of an in-process device")
      ->capture_default_str();
  cmd->add_option("--listen", options->listen,
                  "ADDR:PORT to listen on (port 0: any); not loopback needs --token-file")
      ->capture_default_str();
  cmd->add_option("--token-file", options->token_file,
                  "File holding the token clients must send (they read it from SYSTOLE_TOKEN "
                  "or the file SYSTOLE_TOKEN_FILE names)")
      ->check(CLI::ExistingFile);
  // Every limit has a range, so that no value wraps (4096 MiB << 20 is 0 in 32 bits) or leaves
  // a server nobody can use; CLI11 names the option and the value it refuses.
  cmd->add_option("--max-clients", options->max_clients, "Greeted clients at once")
      ->check(CLI::Range(1u, 4096u))
      ->capture_default_str();
  cmd->add_option("--max-frame-mib", options->max_frame_mib, "Largest frame payload, MiB")
      ->check(CLI::Range(1u, 1024u))
      ->capture_default_str();
  cmd->add_option("--max-client-memory-mib", options->max_client_memory_mib,
                  "Device memory one client may allocate, MiB (default: a quarter of device "
                  "memory)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 24));
  cmd->add_option("--launch-timeout-s", options->launch_timeout_s,
                  "A launch running longer is aborted (ABORTED)")
      ->check(CLI::Range(1u, 86400u))
      ->capture_default_str();
  cmd->add_option("--idle-timeout-s", options->idle_timeout_s,
                  "A client idle this long is disconnected")
      ->check(CLI::Range(1u, 86400u))
      ->capture_default_str();
  cmd->callback([options] { Serve(*options); });
}

}  // namespace systole::cli
