// .npy / .npz: round trips for every element type, files as NumPy writes them, and clean
// errors for everything malformed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <fstream>
#include <functional>
#include <random>

#include "tests/util/zip_builder.hpp"
#include "toolchain/npy/npy.hpp"

namespace systole::npy {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

std::vector<std::uint8_t> Bytes(const std::string& text) { return {text.begin(), text.end()}; }

// A .npy image exactly as numpy 1.x writes np.array([[1, 2, 3], [4, 5, 6]], dtype=np.float32).
std::vector<std::uint8_t> NumpyWritten() {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header.push_back('\n');
  std::string file = std::string("\x93NUMPY\x01\x00", 8);
  file.push_back(static_cast<char>(header.size()));
  file.push_back('\0');
  file += header;
  for (float value : {1.f, 2.f, 3.f, 4.f, 5.f, 6.f}) {
    file.append(reinterpret_cast<const char*>(&value), sizeof value);
  }
  return Bytes(file);
}

std::string ErrorOf(const std::vector<std::uint8_t>& bytes) {
  try {
    ParseNpy(bytes, "x.npy");
  } catch (const NpyError& error) {
    return error.what();
  }
  return "(no error)";
}

std::string ErrorOf(const std::function<void()>& action) {
  try {
    action();
  } catch (const NpyError& error) {
    return error.what();
  }
  return "(no error)";
}

TEST(Npy, ReadsWhatNumpyWrites) {
  const Array array = ParseNpy(NumpyWritten(), "x.npy");
  EXPECT_EQ(array.type, ElementType::kFloat32);
  EXPECT_EQ(array.shape, (std::vector<std::uint64_t>{2, 3}));
  EXPECT_EQ(array.values, (std::vector<double>{1, 2, 3, 4, 5, 6}));
}

TEST(Npy, WritesWhatNumpyWrites) {
  const Array array{ElementType::kFloat32, {2, 3}, {1, 2, 3, 4, 5, 6}};
  EXPECT_EQ(SerializeNpy(array), NumpyWritten());
}

TEST(Npy, EveryTypeAndShapeRoundTrips) {
  const std::vector<std::vector<std::uint64_t>> shapes = {{}, {5}, {2, 3}, {2, 1, 3}, {0, 4}};
  for (ElementType type : {ElementType::kInt8, ElementType::kUInt8, ElementType::kInt32,
                           ElementType::kInt64, ElementType::kFloat32, ElementType::kFloat64}) {
    for (const auto& shape : shapes) {
      Array array{type, shape, {}};
      for (std::uint64_t i = 0; i < array.Elements(); ++i) {
        array.values.push_back(static_cast<double>(i % 100) - (type == ElementType::kUInt8 ? 0 : 50));
      }
      const std::vector<std::uint8_t> image = SerializeNpy(array);
      EXPECT_EQ((10 + image[8]) % 64, 0u) << "data is 64-byte aligned";
      const Array back = ParseNpy(image, "x.npy");
      EXPECT_EQ(back.type, array.type) << ElementTypeName(type);
      EXPECT_EQ(back.shape, array.shape);
      EXPECT_EQ(back.values, array.values);
    }
  }
}

TEST(Npy, OneDimensionalShapeIsAPythonOneTuple) {
  const std::vector<std::uint8_t> image = SerializeNpy(Array{ElementType::kInt8, {3}, {1, 2, 3}});
  EXPECT_NE(std::string(image.begin(), image.end()).find("'shape': (3,)"), std::string::npos);
}

TEST(Npy, Errors) {
  EXPECT_THAT(ErrorOf(Bytes("hello")), HasSubstr("x.npy: not a readable .npy file: missing"));
  auto fortran = NumpyWritten();
  const std::string text(fortran.begin(), fortran.end());
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string copy = text;
    copy.replace(copy.find(from), from.size(), to);
    return Bytes(copy);
  };
  EXPECT_THAT(ErrorOf(replaced("False", "True ")), HasSubstr("Fortran-order"));
  EXPECT_THAT(ErrorOf(replaced("<f4", "<c8")), HasSubstr("dtype '<c8' is not supported"));
  EXPECT_THAT(ErrorOf(replaced("(2, 3)", "(2, 4)")), HasSubstr("shape holds 8 elements"));
  auto truncated = NumpyWritten();
  truncated.resize(truncated.size() - 1);
  EXPECT_THAT(ErrorOf(truncated), HasSubstr("data bytes follow"));
  auto long_header = NumpyWritten();
  long_header[8] = 0xFF;
  long_header[9] = 0xFF;
  EXPECT_THAT(ErrorOf(long_header), HasSubstr("header runs past the end"));
}

TEST(Npy, RandomCorruptionNeverCrashes) {
  const unsigned seed = std::random_device{}();
  std::cout << "seed " << seed << "\n";
  std::mt19937 rng(seed);
  const auto good = NumpyWritten();
  for (int i = 0; i < 5000; ++i) {
    auto bytes = good;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) bytes[rng() % bytes.size()] = static_cast<std::uint8_t>(rng());
    if (rng() % 4 == 0) bytes.resize(rng() % bytes.size());
    try {
      ParseNpy(bytes, "fuzz.npy");
    } catch (const NpyError&) {
    }
  }
}

// fuzz_npy found it: an int64 near 2^63 reads into a double as 2^63, and writing that back
// cast it to int64, which is undefined (x86 gives INT64_MIN). It saturates now, NaN is 0.
TEST(Npy, Int64BeyondDoublePrecisionSaturatesOnTheWayOut) {
  const Array array{ElementType::kInt64, {3}, {0x1p63, -0x1p64, std::nan("")}};
  const Array back = ParseNpy(SerializeNpy(array), "x.npy");
  EXPECT_EQ(back.values, (std::vector<double>{0x1p63, -0x1p63, 0}));  // INT64_MAX reads as 2^63
  const std::vector<std::uint8_t> bytes = SerializeNpy(array);
  std::int64_t first = 0;
  std::memcpy(&first, &bytes[bytes.size() - 24], sizeof first);
  EXPECT_EQ(first, std::numeric_limits<std::int64_t>::max());
}

class NpzTest : public ::testing::Test {
 protected:
  std::filesystem::path path_ = std::filesystem::temp_directory_path() /
                                ("systole_npz_test_" + std::to_string(::getpid()) + ".npz");
  void TearDown() override { std::filesystem::remove(path_); }
};

TEST_F(NpzTest, RoundTripKeepsOrder) {
  const std::vector<Array> arrays = {{ElementType::kFloat32, {2, 2}, {1.5, -2, 3, 4}},
                                     {ElementType::kInt8, {3}, {-128, 0, 127}}};
  WriteNpz(path_, arrays);
  const std::vector<Array> back = ReadNpz(path_);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].values, arrays[0].values);
  EXPECT_EQ(back[1].type, ElementType::kInt8);
  EXPECT_EQ(back[1].values, arrays[1].values);
}

TEST_F(NpzTest, NotAZipIsAClearError) {
  std::ofstream(path_) << "not a zip";
  try {
    ReadNpz(path_);
    FAIL();
  } catch (const NpyError& error) {
    EXPECT_THAT(error.what(), HasSubstr("not a valid .npz (zip archive)"));
  }
}

// Each member is checked against its CRC: numpy.savez stores members, so a damaged byte is
// a changed number that would otherwise run (11 of 12 randomly damaged inputs once did).
TEST_F(NpzTest, AChangedNumberFailsTheCrc) {
  const std::vector<std::uint8_t> image = SerializeNpy({ElementType::kInt8, {4}, {1, 2, 3, 4}});
  auto zip = testing::MakeZip({{"arr_0.npy", std::string(image.begin(), image.end()), /*store=*/true}});
  zip[testing::FindOnce(zip, "\x01\x02\x03\x04") + 2] = 99;
  testing::WriteBytes(path_, zip);
  EXPECT_THAT(ErrorOf([&] { ReadNpz(path_); }), HasSubstr(".npz: arr_0.npy: corrupt: CRC error"));
}

// 8 MiB of int8 zeros deflate to about 8 KiB: refused, naming the file and the member, before
// the 8 MiB (and the 64 MiB of doubles they would become) are allocated.
TEST_F(NpzTest, ADecompressionBombIsRefused) {
  const std::vector<std::uint8_t> image =
      SerializeNpy({ElementType::kInt8, {8 << 20}, std::vector<double>(8 << 20, 0.0)});
  testing::WriteBytes(path_, testing::MakeZip({{"arr_0.npy", std::string(image.begin(), image.end())}}));
  EXPECT_THAT(ErrorOf([&] { ReadNpz(path_); }),
              AllOf(HasSubstr(path_.string() + ": arr_0.npy: "), HasSubstr("decompression bomb")));
}

// WriteNpz stores members as numpy.savez does, so even an all-zero output reads back.
TEST_F(NpzTest, LargeZeroOutputsRoundTrip) {
  WriteNpz(path_, {{ElementType::kInt8, {6 << 20}, std::vector<double>(6 << 20, 0.0)}});
  EXPECT_EQ(ReadNpz(path_)[0].values.size(), 6u << 20);
}

TEST_F(NpzTest, MissingFileIsAClearError) {
  EXPECT_THROW(ReadNpz(path_.string() + ".missing"), NpyError);
}

}  // namespace
}  // namespace systole::npy
