// The HLS MXU kernel behind the SystemC platform's sockets (hls_device_model.hpp).
#include "sim/systemc/hls_device_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "hls/generated/configs.hpp"
#include "hls/kernels/mxu_tile.hpp"

namespace systole::systemc {
namespace {

// One MATMUL through hls::MxuRow, one input row at a time, as the kernel's pipelined loop
// takes them: the tile in the kernel's [R][C] form, each UB row's first K elements as its x.
template <unsigned kRows, unsigned kCols, bool kBf16>
void RunMatmul(const model::MatmulOperands& op) {
  using Element = std::conditional_t<kBf16, std::uint16_t, std::int8_t>;
  std::vector<Element> tile(std::size_t{kRows} * kCols);
  for (std::uint32_t t = 0; t < kRows; ++t) {
    for (std::uint32_t j = 0; j < kCols; ++j) {
      if constexpr (kBf16) {
        tile[t * kCols + j] = op.tile.Bf16(t, j);
      } else {
        tile[t * kCols + j] = static_cast<std::int8_t>(op.tile.Int8(t, j));
      }
    }
  }
  const auto& weights = *reinterpret_cast<const Element(*)[kRows][kCols]>(tile.data());
  Element x[kRows];
  for (std::uint64_t i = 0; i < op.rows; ++i) {
    const std::uint8_t* row = op.ub + i * op.ub_row_bytes;
    for (std::uint32_t t = 0; t < kRows; ++t) {
      if (t >= op.k) {
        x[t] = 0;  // not read by the kernel (t >= k), set for tidiness
      } else if constexpr (kBf16) {
        x[t] = static_cast<std::uint16_t>(row[2 * t] | row[2 * t + 1] << 8);
      } else {
        x[t] = static_cast<std::int8_t>(row[t]);
      }
    }
    std::uint32_t* acc = op.acc + i * kCols;
    if constexpr (kBf16) {
      hls::MxuRow<kRows, kCols>(x, weights, op.k, op.accumulate, acc);
    } else {
      hls::MxuRow<kRows, kCols>(x, weights, op.k, op.accumulate, reinterpret_cast<std::int32_t*>(acc));
    }
  }
}

using MatmulFunction = void (*)(const model::MatmulOperands&);

struct GeneratedSizes {
  const char* name;
  unsigned rows, cols;
  bool bf16;
  MatmulFunction run;
};

#define SYSTOLE_HLS_SIZES(NS)                                                                      \
  GeneratedSizes{hls::configs::NS::kName, hls::configs::NS::kRows, hls::configs::NS::kCols,       \
                 hls::configs::NS::kBf16,                                                          \
                 &RunMatmul<hls::configs::NS::kRows, hls::configs::NS::kCols, hls::configs::NS::kBf16>},
const GeneratedSizes kGenerated[] = {SYSTOLE_HLS_FOR_EACH_CONFIG(SYSTOLE_HLS_SIZES)};
#undef SYSTOLE_HLS_SIZES

}  // namespace

model::MatmulKernel HlsMatmulKernel(const Config& config, std::shared_ptr<std::uint64_t> rows_computed) {
  const auto found = std::find_if(std::begin(kGenerated), std::end(kGenerated),
                                  [&](const GeneratedSizes& g) { return config.name == g.name; });
  if (found == std::end(kGenerated)) {
    throw std::invalid_argument(fmt::format(
        "hls: no generated HLS kernel sizes for configuration '{}' (hls/generated/configs.hpp has the "
        "named configurations; run `make generate` after adding one)", config.name));
  }
  const bool bf16 = config.dtype == DType::kBf16;
  if (found->rows != config.rows || found->cols != config.cols || found->bf16 != bf16) {
    throw std::invalid_argument(fmt::format(
        "hls: configuration '{}' is {}x{} {} but its generated HLS kernel is {}x{} {} "
        "(hls/generated/configs.hpp is out of date: run `make generate`)",
        config.name, config.rows, config.cols, bf16 ? "bf16" : "int8", found->rows, found->cols,
        found->bf16 ? "bf16" : "int8"));
  }
  return [run = found->run, rows_computed](const model::MatmulOperands& op) {
    run(op);
    if (rows_computed) *rows_computed += op.rows;
  };
}

std::unique_ptr<DeviceModel> MakeHlsDeviceModel(const Config& config) {
  auto device = std::make_unique<GoldenDeviceModel>(config);
  device->golden().SetMatmulKernel(HlsMatmulKernel(config));
  return device;
}

}  // namespace systole::systemc
