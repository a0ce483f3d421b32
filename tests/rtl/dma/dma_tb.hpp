#pragma once
// What the DMA tests know of dma_tb.sv: its engines' indices on the cmd/done buses, and the
// size of the data region the tests fill in device memory.
#include <cstdint>

namespace systole::rtl::dma_tb {

enum Engine : unsigned { kLoad = 0, kWeight = 1, kStore = 2 };
constexpr std::uint64_t kDataBytes = 0x10000;

}  // namespace systole::rtl::dma_tb
