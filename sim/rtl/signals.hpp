// Bytes in and out of Verilated signals. Verilator types a signal of up to 64 bits as a plain
// integer and a wider one as VlWide (an array of 32-bit words); both hold the value
// little-endian, which is also how rows and memory words are laid out (rtl/README.md).
#pragma once

#include <cstdint>
#include <span>
#include <type_traits>

namespace systole::rtl {

// Byte `index` of `signal` (bits 8*index+7 .. 8*index).
template <class Signal>
std::uint8_t SignalByte(const Signal& signal, unsigned index) {
  if constexpr (std::is_integral_v<Signal>) {
    return static_cast<std::uint8_t>(signal >> (8 * index));
  } else {
    return static_cast<std::uint8_t>(signal[index / 4] >> (8 * (index % 4)));
  }
}

// Sets a signal's low bytes.size() bytes from `bytes`: a wide one's in 32-bit words (a multiple
// of 4 bytes), a plain integer's (at most its size) byte by byte.
template <class Signal>
void SetSignalBytes(Signal& signal, std::span<const std::uint8_t> bytes) {
  if constexpr (std::is_integral_v<Signal>) {
    Signal value = 0;
    for (std::size_t i = 0; i < bytes.size() && i < sizeof(Signal); ++i) value |= Signal(bytes[i]) << (8 * i);
    signal = value;
  } else {
    for (std::size_t i = 0; i < bytes.size() / 4; ++i) {
      signal[i] = std::uint32_t{bytes[4 * i]} | std::uint32_t{bytes[4 * i + 1]} << 8 |
                  std::uint32_t{bytes[4 * i + 2]} << 16 | std::uint32_t{bytes[4 * i + 3]} << 24;
    }
  }
}

}  // namespace systole::rtl
