// libFuzzer: any bytes parse as .npy or throw NpyError; what parses serialises and re-parses
// to the same array.
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "toolchain/npy/npy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace systole::npy;
  const std::vector<std::uint8_t> bytes(data, data + size);
  Array array;
  try {
    array = ParseNpy(bytes, "fuzz.npy");
  } catch (const NpyError&) {
    return 0;
  }
  const Array again = ParseNpy(SerializeNpy(array), "again.npy");
  if (again.shape != array.shape || again.type != array.type ||
      again.values.size() != array.values.size()) {
    std::abort();
  }
  return 0;
}
