// systole info: what a configuration describes, or what a device reports about itself.
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include "arch/config/config.hpp"
#include "arch/regs/identity.hpp"
#include "cli/commands.hpp"
#include "systole/device_names.hpp"
#include "systole/link.hpp"

namespace systole::cli {
namespace {

struct InfoOptions {
  std::string config{kDefaultConfig};
  std::string device;  // empty: describe the configuration file only
  bool json = false;
  bool list = false;
};

std::string Bytes(std::uint64_t bytes) {
  if (bytes >= (1ull << 30) && bytes % (1ull << 30) == 0) return fmt::format("{} GiB", bytes >> 30);
  if (bytes >= (1ull << 20) && bytes % (1ull << 20) == 0) return fmt::format("{} MiB", bytes >> 20);
  if (bytes >= (1ull << 10) && bytes % (1ull << 10) == 0) return fmt::format("{} KiB", bytes >> 10);
  return fmt::format("{} bytes", bytes);
}

nlohmann::ordered_json ToJson(const Config& config) {
  const char* acc_type = config.dtype == DType::kInt8 ? "int32" : "fp32";
  return {
      {"name", config.name},
      {"description", config.description},
      {"array", {{"rows", config.rows}, {"cols", config.cols}, {"dtype", DTypeName(config.dtype)},
                 {"accumulator_dtype", acc_type}, {"macs_per_cycle", config.PeakMacsPerCycle()}}},
      {"unified_buffer", {{"bytes", config.unified_buffer_bytes}, {"rows", config.UbRows()},
                          {"row_elems", config.UbRowElems()}, {"row_bytes", config.UbRowBytes()}}},
      {"accumulators", {{"bytes", config.accumulator_bytes}, {"rows", config.AccRows()},
                        {"row_elems", config.AccRowElems()}, {"row_bytes", config.AccRowBytes()}}},
      {"weight_fifo", {{"tiles", config.weight_fifo_tiles},
                       {"tile_bytes", config.WeightTileBytes()}}},
      {"memory", {{"bytes", config.memory_bytes}, {"channels", config.memory_channels},
                  {"interleave_bytes", config.interleave_bytes}}},
      {"queues", {{"command_queue_depth", config.command_queue_depth},
                  {"token_capacity", config.token_capacity}, {"load_credits", config.load_credits}}},
      {"clock_mhz", config.clock_mhz},
      {"peak_gmacs", static_cast<double>(config.PeakMacsPerCycle()) * config.clock_mhz / 1000.0},
  };
}

void PrintText(const Config& config) {
  const char* acc_type = config.dtype == DType::kInt8 ? "int32" : "fp32";
  fmt::print("configuration   {} — {}\n", config.name, config.description);
  fmt::print("array           {} x {} {} ({} x {} -> {}), {} MACs/cycle, {:.1f} GMAC/s peak\n",
             config.rows, config.cols, DTypeName(config.dtype), DTypeName(config.dtype),
             DTypeName(config.dtype), acc_type, config.PeakMacsPerCycle(),
             static_cast<double>(config.PeakMacsPerCycle()) * config.clock_mhz / 1000.0);
  fmt::print("unified buffer  {}: {} rows x {} {}\n", Bytes(config.unified_buffer_bytes),
             config.UbRows(), config.UbRowElems(), DTypeName(config.dtype));
  fmt::print("accumulators    {}: {} rows x {} {}\n", Bytes(config.accumulator_bytes),
             config.AccRows(), config.AccRowElems(), acc_type);
  fmt::print("weight FIFO     {} tiles of {}\n", config.weight_fifo_tiles,
             Bytes(config.WeightTileBytes()));
  fmt::print("device memory   {} in {} channel{}, {}-byte interleave\n",
             Bytes(config.memory_bytes), config.memory_channels,
             config.memory_channels == 1 ? "" : "s", config.interleave_bytes);
  fmt::print("queues          {} launches, {} tokens per unit pair, {} LOAD credits (32-byte words)\n",
             config.command_queue_depth, config.token_capacity, config.load_credits);
  fmt::print("clock           {} MHz (used for reports)\n", config.clock_mhz);
}

void RunInfo(const InfoOptions& options) {
  if (options.list) {
    nlohmann::ordered_json all = nlohmann::ordered_json::array();
    for (const std::string& name : ListConfigs()) {
      const Config config = LoadConfig(name);
      if (options.json) {
        all.push_back(ToJson(config));
      } else {
        fmt::print("{:<12} {}\n", config.name, config.description);
      }
    }
    if (options.json) fmt::print("{}\n", all.dump(2));
    return;
  }
  Config config = LoadConfigNameOrFile(options.config);
  if (!options.device.empty()) {
    // A name or a list: show what it stands for, then the first device's identity.
    const DeviceResolution resolution = ResolveDevice(options.device);
    if (resolution.uris.size() != 1 || resolution.uris[0] != options.device) {
      if (options.json) {
        nlohmann::ordered_json json = {{"device", options.device}, {"uris", resolution.uris},
                                       {"source", resolution.source}};
        fmt::print("{}\n", json.dump(2));
        return;
      }
      fmt::print("device          {} -> {} ({})\n", options.device, fmt::join(resolution.uris, ", "),
                 resolution.source);
      for (const std::string& uri : resolution.uris) {
        std::unique_ptr<Link> link = OpenLink(uri, config);
        const Config reported = regs::DecodeIdentity([&link](std::uint32_t offset) { return link->ReadRegister(offset); });
        fmt::print("                {}: {}, {}x{} {}\n", uri, reported.name, reported.rows, reported.cols,
                   DTypeName(reported.dtype));
      }
      return;
    }
    // Describe what the device reports through its identity registers, not the file.
    std::unique_ptr<Link> link = OpenLink(options.device, config);
    Config reported = regs::DecodeIdentity(
        [&link](std::uint32_t offset) { return link->ReadRegister(offset); });
    reported.description = config.name == reported.name ? config.description : "";
    config = reported;
  }
  if (options.json) {
    nlohmann::ordered_json json = ToJson(config);
    if (!options.device.empty()) json["device"] = options.device;
    fmt::print("{}\n", json.dump(2));
    return;
  }
  if (!options.device.empty()) fmt::print("device          {} (identity registers)\n", options.device);
  PrintText(config);
}

}  // namespace

void AddInfoCommand(CLI::App& app) {
  auto options = std::make_shared<InfoOptions>();
  CLI::App* cmd = app.add_subcommand("info", "Describe a configuration, or what a device reports");
  cmd->add_option("-c,--config", options->config, "Configuration name or .toml path")
      ->capture_default_str();
  cmd->add_option("-d,--device", options->device,
                  "Read the identity registers of this device instead (e.g. ref); a name from "
                  "devices.toml or a list shows what it resolves to")
      ->check(NoTokenInUri());
  cmd->add_flag("--json", options->json, "Print JSON");
  cmd->add_flag("--list", options->list, "List the shipped configurations");
  cmd->callback([options] { RunInfo(*options); });
}

}  // namespace systole::cli
