// The `hls` device model of the SystemC platform (`systemc?model=hls`): the golden model with
// its matrix unit's arithmetic done by the HLS MXU kernel (hls/kernels/mxu_tile.hpp), the C++
// that Vitis HLS would synthesize, sized by the configuration's generated constants
// (hls/generated/configs.hpp). Registers, memory, the weight FIFO, counters and timing stay the
// golden model's, so the platform runs whole programs through the synthesizable kernel and
// every result must equal `ref`'s bit for bit (tests/systemc/programs).
#pragma once

#include <cstdint>
#include <memory>

#include "arch/config/config.hpp"
#include "sim/model/golden_model.hpp"
#include "sim/systemc/device_model.hpp"

namespace systole::systemc {

// The HLS kernel as a model::MatmulKernel for `config`. Throws std::invalid_argument when the
// generated HLS sizes have no configuration of that name, or when its sizes differ from
// `config`'s (a configuration file edited after `systole gen`). `rows_computed`, when given,
// counts the input rows the kernel has run.
model::MatmulKernel HlsMatmulKernel(const Config& config,
                                    std::shared_ptr<std::uint64_t> rows_computed = nullptr);

std::unique_ptr<DeviceModel> MakeHlsDeviceModel(const Config& config);

}  // namespace systole::systemc
