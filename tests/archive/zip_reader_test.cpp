// archive::ZipReader: members come back exactly, and every defect a hostile or damaged archive
// can have — a changed byte, a forged size, a decompression bomb, many members that add up to
// one — is refused with the archive and the member named, before anything large is allocated.
#include "toolchain/archive/zip_reader.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <functional>

#include "tests/util/zip_builder.hpp"

namespace systole::archive {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using testing::ZipEntry;

constexpr std::uint64_t kMiB = 1 << 20;

std::string Zeros(std::uint64_t bytes) { return std::string(bytes, '\0'); }

std::string ErrorOf(const std::function<void()>& action) {
  try {
    action();
  } catch (const ZipError& error) {
    return error.what();
  }
  return "<no error>";
}

std::vector<std::uint8_t> Read(const std::vector<std::uint8_t>& zip, std::string_view member) {
  return ZipReader::OpenBytes(zip, "t.zip", "test archive", Limits{}).Read(member);
}

TEST(ZipReader, ReadsStoredAndDeflatedMembers) {
  const std::string text = "weights, activations and instruction words";
  const auto zip = testing::MakeZip({{"a.bin", text, true}, {"b.bin", text, false}, {"empty", "", false}});
  ZipReader reader = ZipReader::OpenBytes(zip, "t.zip", "test archive", Limits{});
  EXPECT_EQ(reader.Members(), 3u);
  EXPECT_TRUE(reader.Contains("b.bin"));
  EXPECT_FALSE(reader.Contains("c.bin"));
  EXPECT_EQ(reader.Read("a.bin"), std::vector<std::uint8_t>(text.begin(), text.end()));
  EXPECT_EQ(reader.Read("b.bin"), std::vector<std::uint8_t>(text.begin(), text.end()));
  EXPECT_TRUE(reader.Read("empty").empty());
  EXPECT_EQ(ErrorOf([&] { reader.Read("c.bin"); }), "t.zip: c.bin is missing");
}

TEST(ZipReader, AChangedByteFailsTheCrc) {
  auto zip = testing::MakeZip({{"a.npy", "0123456789abcdef", true}});
  zip[testing::FindOnce(zip, "789")] = '0';  // a digit changed, the CRC left as it was
  EXPECT_EQ(ErrorOf([&] { Read(zip, "a.npy"); }), "t.zip: a.npy: corrupt: CRC error");
}

TEST(ZipReader, ADamagedDeflateStreamIsAnError) {
  std::string text;
  for (int i = 0; i < 2000; ++i) text += std::to_string(i * 7919 % 1009) + ",";
  auto zip = testing::MakeZip({{"a.txt", text, false}});
  zip[zip.size() / 2] ^= 0x5a;  // in the middle of the compressed data
  EXPECT_THAT(ErrorOf([&] { Read(zip, "a.txt"); }), HasSubstr("t.zip: a.txt: "));
}

TEST(ZipReader, AForgedSizeIsRefusedBeforeAllocating) {
  // 300 bytes that say they are 3 GiB: refused by the ratio, not after allocating 3 GiB.
  auto zip = testing::MakeZip({{"a.npy", std::string(300, 'x'), true}});
  testing::ForgeDeclaredSize(zip, "a.npy", 3u << 30);
  EXPECT_THAT(ErrorOf([&] { Read(zip, "a.npy"); }),
              AllOf(HasSubstr("t.zip: a.npy: 300 compressed bytes expand to 3221225472"),
                    HasSubstr("decompression bomb")));
  // Fewer bytes declared than the member holds: caught as the extra bytes arrive.
  testing::ForgeDeclaredSize(zip, "a.npy", 10);
  EXPECT_THAT(ErrorOf([&] { Read(zip, "a.npy"); }), HasSubstr("t.zip: a.npy: "));
}

TEST(ZipReader, ADeflateBombIsRefused) {
  // 8 MiB of zeros deflate to about 8 KiB (1000:1): beyond the 100:1 of Limits.
  const auto zip = testing::MakeZip({{"bomb.bin", Zeros(8 * kMiB), false}});
  EXPECT_THAT(ErrorOf([&] { Read(zip, "bomb.bin"); }),
              AllOf(HasSubstr("t.zip: bomb.bin: "), HasSubstr("expand to 8388608 (more than 100:1)")));
  // Below the grace size any ratio is fine: small files of zeros are common and harmless.
  const auto small = testing::MakeZip({{"zeros.bin", Zeros(2 * kMiB), false}});
  EXPECT_EQ(Read(small, "zeros.bin").size(), 2 * kMiB);
}

TEST(ZipReader, ManySmallMembersCannotAddUpToABomb) {
  const auto zip = testing::MakeZip(
      {{"a", Zeros(3 * kMiB), false}, {"b", Zeros(3 * kMiB), false}, {"c", Zeros(3 * kMiB), false}});
  ZipReader reader = ZipReader::OpenBytes(zip, "t.zip", "test archive", Limits{});
  EXPECT_EQ(reader.Read("a").size(), 3 * kMiB);
  EXPECT_THAT(ErrorOf([&] { reader.Read("b"); }),
              AllOf(HasSubstr("t.zip: b: with the members before it, 6291456 bytes from a "),
                    HasSubstr("decompression bomb")));
}

TEST(ZipReader, SizesAgainstWhatTheCallerKnows) {
  const auto zip = testing::MakeZip({{"text.bin", std::string(64, 'w'), false}});
  ZipReader reader = ZipReader::OpenBytes(zip, "t.zip", "test archive", Limits{.max_member_bytes = 32});
  EXPECT_EQ(ErrorOf([&] { reader.ReadExactly("text.bin", 96); }), "t.zip: text.bin holds 64 bytes, the manifest says 96");
  EXPECT_EQ(ErrorOf([&] { reader.ReadAtMost("text.bin", 16); }), "t.zip: text.bin is too large: 64 bytes (at most 16)");
  EXPECT_EQ(ErrorOf([&] { reader.Read("text.bin"); }), "t.zip: text.bin is too large: 64 bytes (at most 32)");
}

TEST(ZipReader, OpensOnlyRegularFilesThatAreZips) {
  EXPECT_EQ(ErrorOf([] { ZipReader::OpenFile("/dev/zero", ".npz", Limits{}); }), "/dev/zero: not a regular file");
  EXPECT_EQ(ErrorOf([] { ZipReader::OpenFile("/no/such.npz", ".npz", Limits{}); }), "/no/such.npz: no such file");
  EXPECT_EQ(ErrorOf([] { ZipReader::OpenBytes({}, "e.sbin", "bundle", Limits{}); }),
            "e.sbin: not a valid bundle: the file is empty");
  const std::vector<std::uint8_t> text = {'h', 'a', 'l', 't'};
  EXPECT_EQ(ErrorOf([&] { ZipReader::OpenBytes(text, "h.sbin", "bundle", Limits{}); }),
            "h.sbin: not a valid bundle (zip archive): Not a zip archive");

  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("systole_zip_reader_" + std::to_string(::getpid()) + ".zip");
  testing::WriteBytes(path, testing::MakeZip({{"m", "member", false}}));
  EXPECT_EQ(ZipReader::OpenFile(path, ".npz", Limits{}).Read("m").size(), 6u);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace systole::archive
