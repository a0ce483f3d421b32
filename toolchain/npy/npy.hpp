// NumPy .npy and .npz files: how arrays enter and leave Systole runs.
//
// Inputs are read from `numpy.savez(f, *arrays)` archives (members arr_0.npy, arr_1.npy, …) and
// outputs written the same way. Values travel as doubles, which hold every int8, int32, bf16 and
// fp32 value exactly; the element type says how the file stores them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace systole::npy {

// Element types Systole reads and writes. (bf16 has no NumPy dtype: it is written as float32.)
enum class ElementType : std::uint8_t { kInt8, kUInt8, kInt32, kInt64, kFloat32, kFloat64 };
std::string_view ElementTypeName(ElementType type);  // "int8", …, "float64"

class NpyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Array {
  ElementType type = ElementType::kFloat32;
  std::vector<std::uint64_t> shape;  // empty: a scalar
  std::vector<double> values;        // row-major (C order)

  std::uint64_t Elements() const;
};

// One .npy file image. Parse never reads past `bytes`; any malformed header, unsupported dtype,
// Fortran order or size mismatch throws NpyError saying what and where (`origin`).
Array ParseNpy(const std::vector<std::uint8_t>& bytes, std::string_view origin);
std::vector<std::uint8_t> SerializeNpy(const Array& array);

// .npz archives: arrays in order arr_0, arr_1, … (what numpy.savez(f, *arrays) writes). Each
// member is verified and bounded by archive::ZipReader (CRC, sizes, compression ratio) before it
// is parsed; WriteNpz stores members uncompressed, as numpy.savez does.
std::vector<Array> ReadNpz(const std::filesystem::path& path);
void WriteNpz(const std::filesystem::path& path, const std::vector<Array>& arrays);

}  // namespace systole::npy
