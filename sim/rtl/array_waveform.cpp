// FST → ArrayFrames. The hierarchy is walked once to map each PE signal's handle to the PE and
// field it feeds; then the value changes are replayed in time order, and the state is sampled
// on every falling clock edge, half a cycle after the registers took their new values.
#include "sim/rtl/array_waveform.hpp"

#include <fmt/core.h>

#include <map>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "gtkwave/fstapi.h"

namespace systole::rtl {

namespace {

enum class Field { kX, kBank, kW0, kW1, kPsum, kLoading, kLoadBank };

struct Target {
  std::size_t row = 0, col = 0;
  Field field = Field::kX;
};

// The low 32 bits of an FST value ('0'/'1' characters, most significant first; x and z read 0).
std::uint32_t Bits(const unsigned char* value) {
  std::string_view text(reinterpret_cast<const char*>(value));
  if (text.size() > 32) text.remove_prefix(text.size() - 32);
  std::uint32_t bits = 0;
  for (const char c : text) bits = (bits << 1) | (c == '1' ? 1u : 0u);
  return bits;
}

std::optional<Field> FieldOf(std::string_view name) {
  if (name == "x_in") return Field::kX;
  if (name == "bank_in") return Field::kBank;
  if (name == "w0") return Field::kW0;
  if (name == "w1") return Field::kW1;
  if (name == "psum_out") return Field::kPsum;
  if (name == "wload_en") return Field::kLoading;
  if (name == "wload_bank") return Field::kLoadBank;
  return std::nullopt;
}

struct Reader {
  std::map<fstHandle, std::vector<Target>> targets;
  std::optional<fstHandle> clock;
  std::size_t rows = 0, cols = 0;
  trace::ArrayFrames frames;
  std::vector<trace::PeState> state;
  std::uint32_t clock_value = 0;
  std::uint64_t edges = 0;
  std::uint64_t first = 0, limit = 0;

  void Apply(fstHandle handle, const unsigned char* value) {
    if (clock && handle == *clock) {
      const std::uint32_t now = Bits(value);
      if (clock_value == 1 && now == 0) Sample();
      clock_value = now;
      return;
    }
    const auto found = targets.find(handle);
    if (found == targets.end()) return;
    const std::uint32_t bits = Bits(value);
    for (const Target& target : found->second) {
      trace::PeState& pe = state[target.row * cols + target.col];
      switch (target.field) {
        case Field::kX: pe.x = bits; break;
        case Field::kBank: pe.bank = bits != 0; break;
        case Field::kW0: pe.w0 = bits; break;
        case Field::kW1: pe.w1 = bits; break;
        case Field::kPsum: pe.psum = bits; break;
        case Field::kLoading: pe.loading = bits != 0; break;
        case Field::kLoadBank: pe.load_bank = bits != 0; break;
      }
    }
  }

  void Sample() {
    if (edges >= first && edges - first < limit) frames.cycles.push_back({edges, state});
    ++edges;
  }
};

void OnValue(void* user, std::uint64_t /*time*/, fstHandle handle, const unsigned char* value) {
  static_cast<Reader*>(user)->Apply(handle, value);
}

}  // namespace

trace::ArrayFrames ReadArrayWaveform(const std::filesystem::path& fst, std::uint64_t first_cycle,
                                     std::uint64_t max_cycles) {
  if (!std::filesystem::is_regular_file(fst)) throw WaveformError(fmt::format("{}: no such file", fst.string()));
  void* context = fstReaderOpen(fst.c_str());
  if (context == nullptr) throw WaveformError(fmt::format("{}: not an FST waveform", fst.string()));
  Reader reader;
  reader.first = first_cycle;
  reader.limit = max_cycles;
  // The first array in the hierarchy: its PE scopes end in u_array.g_row[T].u_row.g_col[J].u_pe.
  const std::regex pe_scope(R"((.*u_array)\.g_row\[(\d+)\]\.u_row\.g_col\[(\d+)\]\.u_pe$)");
  std::vector<std::string> scopes;
  std::string array_scope;
  std::size_t element_bits = 0;
  while (const fstHier* entry = fstReaderIterateHier(context)) {
    if (entry->htyp == FST_HT_SCOPE) {
      scopes.push_back((scopes.empty() ? "" : scopes.back() + ".") + entry->u.scope.name);
      continue;
    }
    if (entry->htyp == FST_HT_UPSCOPE) {
      if (!scopes.empty()) scopes.pop_back();
      continue;
    }
    if (entry->htyp != FST_HT_VAR || scopes.empty()) continue;
    std::smatch match;
    if (!std::regex_match(scopes.back(), match, pe_scope)) continue;
    if (array_scope.empty()) array_scope = match[1];
    if (match[1] != array_scope) continue;
    // Vectors are named with their range ("x_in [7:0]").
    std::string_view name = entry->u.var.name;
    name = name.substr(0, name.find(' '));
    const auto row = std::stoul(match[2]);
    const auto col = std::stoul(match[3]);
    if (name == "clk" && !reader.clock) reader.clock = entry->u.var.handle;
    const std::optional<Field> field = FieldOf(name);
    if (!field) continue;
    if (*field == Field::kX) element_bits = entry->u.var.length;
    reader.targets[entry->u.var.handle].push_back({row, col, *field});
    reader.rows = std::max<std::size_t>(reader.rows, row + 1);
    reader.cols = std::max<std::size_t>(reader.cols, col + 1);
  }
  if (reader.targets.empty() || !reader.clock) {
    fstReaderClose(context);
    throw WaveformError(fmt::format("{}: holds no systolic array (expected the PEs of an rtl run's core: "
                                    "…u_array.g_row[t].u_row.g_col[j].u_pe)", fst.string()));
  }
  reader.state.assign(reader.rows * reader.cols, {});
  reader.frames.rows = reader.rows;
  reader.frames.cols = reader.cols;
  reader.frames.bf16 = element_bits == 16;
  reader.frames.source = fst.filename().string();
  fstReaderClrFacProcessMaskAll(context);
  fstReaderSetFacProcessMask(context, *reader.clock);
  for (const auto& [handle, unused] : reader.targets) fstReaderSetFacProcessMask(context, handle);
  fstReaderIterBlocks(context, OnValue, &reader, nullptr);
  fstReaderClose(context);
  return std::move(reader.frames);
}

}  // namespace systole::rtl
