#include "systole/device_names.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <toml++/toml.h>

namespace systole {

namespace {

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

std::vector<std::string> SplitList(std::string_view list) {
  std::vector<std::string> items;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = list.find(',', start);
    items.emplace_back(list.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  for (const std::string& item : items) {
    if (item.empty()) throw std::runtime_error(fmt::format("device list '{}' has an empty item", list));
  }
  return items;
}

class Resolver {
 public:
  Resolver() : file_(DevicesFile()) {
    std::error_code error;
    if (file_.empty() || !std::filesystem::exists(file_, error)) return;
    try {
      table_ = toml::parse_file(file_.string());
    } catch (const toml::parse_error& e) {
      throw std::runtime_error(fmt::format("{}:{}:{}: {}", file_.string(), e.source().begin.line,
                                           e.source().begin.column, e.description()));
    }
    if (table_.contains("devices") && !table_["devices"].is_table()) {
      throw std::runtime_error(fmt::format("{}: [devices] must be a table of name = URI or [URI, …]", file_.string()));
    }
  }

  void Resolve(const std::string& item, std::vector<std::string>& stack, std::vector<std::string>& uris,
               bool& from_file) {
    const toml::node* entry = table_["devices"][item].node();
    if (entry == nullptr) {
      uris.push_back(item);  // a URI
      return;
    }
    from_file = true;
    if (std::find(stack.begin(), stack.end(), item) != stack.end()) {
      throw std::runtime_error(fmt::format("{}: device names form a cycle: {} -> {}", file_.string(),
                                           fmt::join(stack, " -> "), item));
    }
    stack.push_back(item);
    const auto bad = [&] {
      return std::runtime_error(fmt::format("{}: devices.{} must be a URI or name (a string) or a list of them",
                                            file_.string(), item));
    };
    if (const auto* value = entry->as_string()) {
      for (const std::string& part : SplitList(value->get())) Resolve(part, stack, uris, from_file);
    } else if (const auto* list = entry->as_array()) {
      if (list->empty()) throw bad();
      for (const toml::node& element : *list) {
        const auto* text = element.as_string();
        if (text == nullptr) throw bad();
        Resolve(text->get(), stack, uris, from_file);
      }
    } else {
      throw bad();
    }
    stack.pop_back();
  }

  const std::filesystem::path& file() const { return file_; }

 private:
  std::filesystem::path file_;
  toml::table table_;
};

}  // namespace

std::filesystem::path DevicesFile() {
  if (const std::string file = Env("SYSTOLE_DEVICES_FILE"); !file.empty()) return file;
  if (const std::string xdg = Env("XDG_CONFIG_HOME"); !xdg.empty()) {
    return std::filesystem::path(xdg) / "systole" / "devices.toml";
  }
  if (const std::string home = Env("HOME"); !home.empty()) {
    return std::filesystem::path(home) / ".config" / "systole" / "devices.toml";
  }
  return {};
}

DeviceResolution ResolveDevice(std::string_view device, std::string_view fallback) {
  DeviceResolution resolution;
  std::string source = "URI";
  resolution.requested = std::string(device);
  if (device.empty()) {
    resolution.requested = Env("SYSTOLE_DEVICE");
    source = "SYSTOLE_DEVICE";
    if (resolution.requested.empty()) {
      resolution.requested = std::string(fallback);
      source = "default";
    }
  }
  Resolver resolver;
  bool from_file = false;
  for (const std::string& item : SplitList(resolution.requested)) {
    std::vector<std::string> stack;
    resolver.Resolve(item, stack, resolution.uris, from_file);
  }
  resolution.source = from_file ? fmt::format("{}{}", source == "URI" ? "" : source + ", ",
                                              "devices file " + resolver.file().string())
                                : source;
  return resolution;
}

}  // namespace systole
