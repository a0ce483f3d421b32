// Construction, host memory access and the read-only views used by tests.
#include "sim/model/golden_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace systole::model {

namespace {
// Validates before any member is sized from the configuration.
const Config& Validated(const Config& config) {
  config.Validate("golden model");
  return config;
}
}  // namespace

std::uint16_t WeightTile::Bf16(std::uint32_t t, std::uint32_t j) const {
  return static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(bf16_values[t * cols + j]) >> 16);
}

GoldenModel::GoldenModel(const Config& config) : GoldenModel(config, TimingParameters{}) {}

GoldenModel::GoldenModel(const Config& config, const TimingParameters& timing)
    : config_(Validated(config)),
      is_bf16_(config.dtype == DType::kBf16),
      element_bytes_(ElementBytes(config.dtype)),
      ub_row_elems_(config.UbRowElems()),
      ub_row_bytes_(config.UbRowBytes()),
      ub_rows_(config.UbRows()),
      acc_rows_(config.AccRows()),
      memory_(config.memory_bytes),
      ub_(ub_rows_ * ub_row_bytes_),
      acc_(acc_rows_ * config.cols),
      timing_(config, timing),
      scratch_f32_(std::max(config.rows, config.cols)),
      scratch_psum_(config.cols),
      scratch_bytes_(ub_row_bytes_) {}

void GoldenModel::WriteMemory(std::uint64_t address, std::span<const std::uint8_t> bytes) {
  memory_.Write(address, bytes);
  Count(Perf::kBytesHost) += bytes.size();
}

void GoldenModel::ReadMemory(std::uint64_t address, std::span<std::uint8_t> bytes) {
  memory_.Read(address, bytes);
  Count(Perf::kBytesHost) += bytes.size();
}

std::span<const std::uint8_t> GoldenModel::UbRow(std::uint64_t row) const {
  if (row >= ub_rows_) {
    throw std::out_of_range(fmt::format("unified-buffer row {} of {}", row, ub_rows_));
  }
  return {UbRowData(row), ub_row_bytes_};
}

std::int8_t GoldenModel::UbInt8(std::uint64_t row, std::uint32_t element) const {
  const auto bytes = UbRow(row);
  if (is_bf16_ || element >= ub_row_elems_) {
    throw std::out_of_range(fmt::format("int8 element {} of unified-buffer row", element));
  }
  return static_cast<std::int8_t>(bytes[element]);
}

std::uint16_t GoldenModel::UbBf16(std::uint64_t row, std::uint32_t element) const {
  const auto bytes = UbRow(row);
  if (!is_bf16_ || element >= ub_row_elems_) {
    throw std::out_of_range(fmt::format("bf16 element {} of unified-buffer row", element));
  }
  return static_cast<std::uint16_t>(bytes[2 * element] | bytes[2 * element + 1] << 8);
}

std::span<const std::uint32_t> GoldenModel::AccRow(std::uint64_t row) const {
  if (row >= acc_rows_) {
    throw std::out_of_range(fmt::format("accumulator row {} of {}", row, acc_rows_));
  }
  return {acc_.data() + row * config_.cols, config_.cols};
}

const WeightTile* GoldenModel::StationaryTile() const {
  return launch_.stationary ? &*launch_.stationary : nullptr;
}

std::uint64_t GoldenModel::Counter(std::string_view name) const {
  const auto counters = regs::Counters();
  for (std::size_t i = 0; i < counters.size() && i < kNumPerfCounters; ++i) {
    if (counters[i].name == name) return registers_.counters()[i];
  }
  throw std::out_of_range(fmt::format("no performance counter named '{}'", name));
}

}  // namespace systole::model
