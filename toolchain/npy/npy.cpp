#include "toolchain/npy/npy.hpp"

#include <fmt/format.h>
#include <zip.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <regex>

#include "toolchain/archive/zip_reader.hpp"

namespace systole::npy {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicBytes = 6;

struct TypeInfo {
  ElementType type;
  std::string_view descr;  // little-endian NumPy descriptor as written
  unsigned bytes;
};
constexpr TypeInfo kTypes[] = {
    {ElementType::kInt8, "|i1", 1},    {ElementType::kUInt8, "|u1", 1},
    {ElementType::kInt32, "<i4", 4},   {ElementType::kInt64, "<i8", 8},
    {ElementType::kFloat32, "<f4", 4}, {ElementType::kFloat64, "<f8", 8},
};

const TypeInfo& Info(ElementType type) {
  for (const TypeInfo& info : kTypes) {
    if (info.type == type) return info;
  }
  return kTypes[0];
}

template <typename T>
T LoadLe(const std::uint8_t* p) {
  T value;
  std::memcpy(&value, p, sizeof value);  // x86-64 and aarch64 Linux are little-endian
  return value;
}

template <typename T>
void StoreLe(std::vector<std::uint8_t>& out, T value) {
  std::uint8_t bytes[sizeof value];
  std::memcpy(bytes, &value, sizeof value);
  out.insert(out.end(), bytes, bytes + sizeof value);
}

double Decode(ElementType type, const std::uint8_t* p) {
  switch (type) {
    case ElementType::kInt8: return static_cast<std::int8_t>(*p);
    case ElementType::kUInt8: return *p;
    case ElementType::kInt32: return LoadLe<std::int32_t>(p);
    case ElementType::kInt64: return static_cast<double>(LoadLe<std::int64_t>(p));
    case ElementType::kFloat32: return LoadLe<float>(p);
    case ElementType::kFloat64: return LoadLe<double>(p);
  }
  return 0;
}

// A double as int64 without undefined behaviour: NaN is 0, and values beyond int64's range
// saturate (an int64 near 2^63 read into a double rounds up to 2^63, one past the largest).
std::int64_t ToInt64(double value) {
  if (std::isnan(value)) return 0;
  if (value >= 0x1p63) return std::numeric_limits<std::int64_t>::max();
  if (value < -0x1p63) return std::numeric_limits<std::int64_t>::min();
  return static_cast<std::int64_t>(value);
}

void Encode(ElementType type, double value, std::vector<std::uint8_t>& out) {
  switch (type) {
    // Narrower integers go through int64 so that an out-of-range value wraps instead of being
    // undefined.
    case ElementType::kInt8:
    case ElementType::kUInt8: out.push_back(static_cast<std::uint8_t>(ToInt64(value))); break;
    case ElementType::kInt32: StoreLe(out, static_cast<std::int32_t>(ToInt64(value))); break;
    case ElementType::kInt64: StoreLe(out, ToInt64(value)); break;
    case ElementType::kFloat32: StoreLe(out, static_cast<float>(value)); break;
    case ElementType::kFloat64: StoreLe(out, value); break;
  }
}

// One array may be as large as 16 GiB; the ratio bounds keep a small file from getting there.
constexpr archive::Limits kNpzLimits{.max_member_bytes = std::uint64_t{1} << 34};

struct ZipCloser {
  void operator()(zip_t* archive) const { zip_discard(archive); }
};

}  // namespace

std::string_view ElementTypeName(ElementType type) {
  switch (type) {
    case ElementType::kInt8: return "int8";
    case ElementType::kUInt8: return "uint8";
    case ElementType::kInt32: return "int32";
    case ElementType::kInt64: return "int64";
    case ElementType::kFloat32: return "float32";
    case ElementType::kFloat64: return "float64";
  }
  return "?";
}

std::uint64_t Array::Elements() const {
  std::uint64_t count = 1;
  for (std::uint64_t dim : shape) count *= dim;
  return count;
}

Array ParseNpy(const std::vector<std::uint8_t>& bytes, std::string_view origin) {
  auto fail = [origin](const std::string& why) {
    return NpyError(fmt::format("{}: not a readable .npy file: {}", origin, why));
  };
  if (bytes.size() < kMagicBytes + 4 || std::memcmp(bytes.data(), kMagic, kMagicBytes) != 0) {
    throw fail("missing the \\x93NUMPY magic");
  }
  const unsigned major = bytes[6];
  std::size_t header_len = 0, header_at = 0;
  if (major == 1) {
    header_len = LoadLe<std::uint16_t>(&bytes[8]);
    header_at = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw fail("truncated header length");
    header_len = LoadLe<std::uint32_t>(&bytes[8]);
    header_at = 12;
  } else {
    throw fail(fmt::format("format version {} is not supported", major));
  }
  if (header_len > bytes.size() - header_at) throw fail("header runs past the end of the file");
  const std::string header(reinterpret_cast<const char*>(&bytes[header_at]), header_len);

  std::smatch match;
  static const std::regex kDescr(R"('descr'\s*:\s*'([^']*)')");
  static const std::regex kFortran(R"('fortran_order'\s*:\s*(True|False))");
  static const std::regex kShape(R"('shape'\s*:\s*\(([^)]*)\))");
  if (!std::regex_search(header, match, kDescr)) throw fail("header has no 'descr'");
  std::string descr = match[1];
  if (descr.size() == 3 && descr[0] == '=') descr[0] = '<';
  if (descr == "<i1" || descr == "i1") descr = "|i1";
  if (descr == "<u1" || descr == "u1") descr = "|u1";
  const TypeInfo* info = nullptr;
  for (const TypeInfo& candidate : kTypes) {
    if (candidate.descr == descr) info = &candidate;
  }
  if (info == nullptr) {
    throw fail(fmt::format("dtype '{}' is not supported (use int8, uint8, int32, int64, float32 "
                           "or float64, little-endian)", descr));
  }
  if (!std::regex_search(header, match, kFortran)) throw fail("header has no 'fortran_order'");
  if (match[1] == "True") throw fail("Fortran-order arrays are not supported (use C order)");
  if (!std::regex_search(header, match, kShape)) throw fail("header has no 'shape'");

  Array array;
  array.type = info->type;
  const std::string dims = match[1];
  static const std::regex kDim(R"(\s*(\d+)\s*(,|$))");
  for (auto it = std::sregex_iterator(dims.begin(), dims.end(), kDim); it != std::sregex_iterator();
       ++it) {
    const std::string digits = (*it)[1];
    if (digits.size() > 12) throw fail("a dimension is implausibly large");
    array.shape.push_back(std::stoull(digits));
  }
  const std::size_t data_at = header_at + header_len;
  const std::uint64_t elements = array.Elements();
  const std::uint64_t available = (bytes.size() - data_at) / info->bytes;
  if (elements > available || (bytes.size() - data_at) != elements * info->bytes) {
    throw fail(fmt::format("shape holds {} elements of {} bytes but {} data bytes follow",
                           elements, info->bytes, bytes.size() - data_at));
  }
  array.values.reserve(elements);
  for (std::uint64_t i = 0; i < elements; ++i) {
    array.values.push_back(Decode(info->type, &bytes[data_at + i * info->bytes]));
  }
  return array;
}

std::vector<std::uint8_t> SerializeNpy(const Array& array) {
  std::string shape;  // "8, 16" — and "8," for one dimension, as Python writes a 1-tuple
  for (std::size_t i = 0; i < array.shape.size(); ++i) {
    shape += fmt::format("{}{}", i == 0 ? "" : ", ", array.shape[i]);
  }
  if (array.shape.size() == 1) shape += ",";
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}",
                                   Info(array.type).descr, shape);
  // Pad with spaces so that the data starts on a 64-byte boundary, newline last.
  const std::size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');
  std::vector<std::uint8_t> out(kMagic, kMagic + kMagicBytes);
  out.push_back(1);
  out.push_back(0);
  StoreLe(out, static_cast<std::uint16_t>(header.size()));
  out.insert(out.end(), header.begin(), header.end());
  for (double value : array.values) Encode(array.type, value, out);
  return out;
}

std::vector<Array> ReadNpz(const std::filesystem::path& path) {
  // Every member verified (CRC, sizes, compression ratio) before it is parsed: a corrupt input
  // must fail here, not run with different numbers.
  std::vector<Array> arrays;
  try {
    archive::ZipReader archive = archive::ZipReader::OpenFile(path, ".npz", kNpzLimits);
    for (std::size_t i = 0;; ++i) {
      const std::string member = fmt::format("arr_{}.npy", i);
      if (!archive.Contains(member)) break;
      arrays.push_back(ParseNpy(archive.Read(member), path.string() + ":" + member));
    }
    if (arrays.empty() && archive.Members() > 0) {
      throw NpyError(fmt::format("{}: has no arr_0.npy (write it with numpy.savez(f, *arrays))", path.string()));
    }
  } catch (const archive::ZipError& error) {
    throw NpyError(error.what());
  }
  return arrays;
}

// libzip writes the archive to a temporary file beside `path` at zip_close and renames it into
// place, so a reader never sees half an archive. Members are stored, as numpy.savez stores them:
// deflate would shrink an all-zero output beyond the ratio ReadNpz accepts from a large member.
void WriteNpz(const std::filesystem::path& path, const std::vector<Array>& arrays) {
  int error = 0;
  zip_t* raw = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
  if (raw == nullptr) throw NpyError(fmt::format("{}: cannot create", path.string()));
  std::unique_ptr<zip_t, ZipCloser> archive(raw);
  // libzip reads the buffers at zip_close: keep them alive until then.
  std::vector<std::vector<std::uint8_t>> images;
  images.reserve(arrays.size());
  for (std::size_t i = 0; i < arrays.size(); ++i) {
    images.push_back(SerializeNpy(arrays[i]));
    zip_source_t* source =
        zip_source_buffer(archive.get(), images.back().data(), images.back().size(), 0);
    const std::string member = fmt::format("arr_{}.npy", i);
    const zip_int64_t index =
        source == nullptr ? -1 : zip_file_add(archive.get(), member.c_str(), source, ZIP_FL_OVERWRITE);
    if (index < 0) {
      if (source != nullptr) zip_source_free(source);
      throw NpyError(fmt::format("{}: cannot add {}", path.string(), member));
    }
    zip_set_file_compression(archive.get(), static_cast<zip_uint64_t>(index), ZIP_CM_STORE, 0);
  }
  if (zip_close(archive.get()) != 0) {
    throw NpyError(fmt::format("{}: cannot write: {}", path.string(), zip_strerror(archive.get())));
  }
  archive.release();  // zip_close freed it
}

}  // namespace systole::npy
