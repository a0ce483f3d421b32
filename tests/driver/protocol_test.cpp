// The frame codec: round trips, any chunking, and every way a frame can be wrong.
#include <gtest/gtest.h>
#include <zlib.h>

#include <random>

#include "systole/protocol.hpp"

namespace {

using namespace systole::protocol;

std::vector<std::uint8_t> Bytes(std::initializer_list<int> values) {
  std::vector<std::uint8_t> bytes;
  for (int v : values) bytes.push_back(static_cast<std::uint8_t>(v));
  return bytes;
}

TEST(Protocol, HeaderIsLittleEndianWithMagicFirst) {
  const auto frame = EncodeFrame(0x0102, 0x0A0B0C0D, Bytes({1, 2, 3}));
  ASSERT_EQ(frame.size(), kHeaderBytes + 3);
  EXPECT_EQ(std::string(frame.begin(), frame.begin() + 4), "SYLK");
  EXPECT_EQ(frame[4], kVersion);
  EXPECT_EQ(frame[5], 0);
  EXPECT_EQ(frame[6], 0x02);
  EXPECT_EQ(frame[7], 0x01);
  EXPECT_EQ(frame[8], 0x0D);
  EXPECT_EQ(frame[11], 0x0A);
  EXPECT_EQ(frame[12], 3);
}

TEST(Protocol, RoundTripsWhateverTheChunking) {
  std::mt19937 rng(1);
  std::vector<std::uint8_t> stream;
  std::vector<Frame> sent;
  for (std::uint32_t id = 1; id <= 50; ++id) {
    Frame frame{static_cast<std::uint16_t>(rng() % 9), id, {}};
    frame.payload.resize(rng() % 3000);
    for (auto& b : frame.payload) b = static_cast<std::uint8_t>(rng());
    const auto bytes = EncodeFrame(frame.type, frame.request_id, frame.payload);
    stream.insert(stream.end(), bytes.begin(), bytes.end());
    sent.push_back(frame);
  }
  for (std::size_t chunk : {std::size_t{1}, std::size_t{7}, std::size_t{20}, std::size_t{4096}}) {
    FrameDecoder decoder;
    std::vector<Frame> received;
    for (std::size_t at = 0; at < stream.size(); at += chunk) {
      decoder.Feed({stream.data() + at, std::min(chunk, stream.size() - at)});
      Frame frame;
      while (decoder.Next(frame) == FrameDecoder::Status::kFrame) received.push_back(frame);
    }
    ASSERT_EQ(received.size(), sent.size()) << "chunk " << chunk;
    for (std::size_t i = 0; i < sent.size(); ++i) {
      EXPECT_EQ(received[i].type, sent[i].type);
      EXPECT_EQ(received[i].request_id, sent[i].request_id);
      EXPECT_EQ(received[i].payload, sent[i].payload);
    }
    EXPECT_EQ(decoder.Buffered(), 0u);
  }
}

TEST(Protocol, SplitHeaderEqualsWholePayload) {
  const auto fields = Bytes({1, 2, 3, 4});
  const auto bulk = Bytes({5, 6, 7});
  auto whole = fields;
  whole.insert(whole.end(), bulk.begin(), bulk.end());
  EXPECT_EQ(EncodeHeader(5, 9, fields, bulk), EncodeHeader(5, 9, whole));
}

// The codec's CRC comes from ISA-L; zlib's crc32 is the reference the protocol names. Sizes
// around the carry-less-multiply versions' block sizes, odd alignments, and a bulk split.
TEST(Protocol, ChecksumIsZlibsCrc32OfHeaderAndPayload) {
  std::mt19937 rng(7);
  std::vector<std::uint8_t> data((1u << 20) + 300);
  for (auto& b : data) b = static_cast<std::uint8_t>(rng());
  for (std::size_t size :
       {0u, 1u, 15u, 16u, 63u, 64u, 65u, 255u, 256u, 257u, 1000u, 4096u, 65537u, 1u << 20}) {
    for (std::size_t offset : {0u, 1u, 3u}) {
      const std::span<const std::uint8_t> payload(data.data() + offset, size);
      const Header header = EncodeHeader(4, 77, payload);
      uLong crc = crc32(0L, header.data(), 16);
      crc = crc32(crc, payload.data(), static_cast<uInt>(payload.size()));
      std::uint32_t carried = 0;
      for (int i = 3; i >= 0; --i) carried = carried << 8 | header[16 + static_cast<std::size_t>(i)];
      EXPECT_EQ(carried, static_cast<std::uint32_t>(crc)) << size << " bytes at +" << offset;
      EXPECT_EQ(EncodeHeader(4, 77, payload.first(size / 3), payload.subspan(size / 3)), header);
      EXPECT_TRUE(PayloadMatches(header, payload));
    }
  }
}

FrameDecoder::Status Decode(const std::vector<std::uint8_t>& bytes, FrameDecoder& decoder,
                            Frame& frame) {
  decoder.Feed(bytes);
  return decoder.Next(frame);
}

TEST(Protocol, TruncatedFrameWaitsForMore) {
  const auto frame = EncodeFrame(2, 1, Bytes({1, 2, 3, 4}));
  Frame out;
  for (std::size_t n = 0; n < frame.size(); ++n) {
    FrameDecoder fresh;
    EXPECT_EQ(Decode({frame.begin(), frame.begin() + static_cast<std::ptrdiff_t>(n)}, fresh, out),
              FrameDecoder::Status::kNeedMore);
  }
}

TEST(Protocol, BadChecksumDropsTheFrameAndGoesOn) {
  auto bad = EncodeFrame(2, 7, Bytes({1, 2, 3, 4}));
  bad.back() ^= 1;
  const auto good = EncodeFrame(3, 8, Bytes({9}));
  FrameDecoder decoder;
  decoder.Feed(bad);
  decoder.Feed(good);
  Frame frame;
  ASSERT_EQ(decoder.Next(frame), FrameDecoder::Status::kError);
  EXPECT_EQ(decoder.error().code, ErrorCode::kBadChecksum);
  EXPECT_EQ(decoder.error().request_id, 7u);
  EXPECT_TRUE(decoder.error().recoverable);
  ASSERT_EQ(decoder.Next(frame), FrameDecoder::Status::kFrame);
  EXPECT_EQ(frame.request_id, 8u);
}

TEST(Protocol, HeaderCorruptionIsDetectedByTheChecksum) {
  auto frame = EncodeFrame(2, 7, Bytes({1, 2, 3, 4}));
  frame[6] ^= 0x40;  // the type
  FrameDecoder decoder;
  Frame out;
  ASSERT_EQ(Decode(frame, decoder, out), FrameDecoder::Status::kError);
  EXPECT_EQ(decoder.error().code, ErrorCode::kBadChecksum);
}

struct FatalCase {
  const char* name;
  std::size_t byte;
  std::uint8_t value;
  ErrorCode code;
};

TEST(Protocol, BadMagicVersionAndSizeStopTheStream) {
  for (const FatalCase& c : {FatalCase{"magic", 0, 'X', ErrorCode::kBadMagic},
                             FatalCase{"version", 4, 9, ErrorCode::kBadVersion},
                             FatalCase{"size", 15, 0x40, ErrorCode::kTooLarge}}) {
    SCOPED_TRACE(c.name);
    auto frame = EncodeFrame(2, 1, Bytes({1, 2, 3, 4}));
    frame[c.byte] = c.value;
    FrameDecoder decoder(1024);
    Frame out;
    ASSERT_EQ(Decode(frame, decoder, out), FrameDecoder::Status::kError);
    EXPECT_EQ(decoder.error().code, c.code);
    EXPECT_FALSE(decoder.error().recoverable);
    EXPECT_FALSE(decoder.error().message.empty());
    // Nothing after a fatal error is believed.
    EXPECT_EQ(Decode(EncodeFrame(2, 2, {}), decoder, out), FrameDecoder::Status::kError);
  }
}

TEST(Protocol, PayloadReaderRefusesShortAndLongPayloads) {
  PayloadWriter writer;
  writer.U8(1).U16(0x203).U32(0x4050607).U64(0x08090A0B0C0D0E0Full).String("token");
  PayloadReader reader(writer.bytes());
  EXPECT_EQ(reader.U8(), 1);
  EXPECT_EQ(reader.U16(), 0x203);
  EXPECT_EQ(reader.U32(), 0x4050607u);
  EXPECT_EQ(reader.U64(), 0x08090A0B0C0D0E0Full);
  EXPECT_EQ(reader.String(100), "token");
  reader.ExpectEnd();
  EXPECT_THROW(reader.U8(), ProtocolError);

  PayloadReader too_long(writer.bytes());
  too_long.U8();
  EXPECT_THROW(too_long.ExpectEnd(), ProtocolError);

  PayloadWriter big_string;
  big_string.String(std::string(50, 'x'));
  PayloadReader limited(big_string.bytes());
  EXPECT_THROW(limited.String(10), ProtocolError);
}

TEST(Protocol, ErrorFramesCarryCodeAndMessage) {
  const auto bytes = EncodeErrorFrame(42, ErrorCode::kOutOfBounds, "outside");
  FrameDecoder decoder;
  Frame frame;
  ASSERT_EQ(Decode(bytes, decoder, frame), FrameDecoder::Status::kFrame);
  EXPECT_EQ(frame.type, static_cast<std::uint16_t>(MessageType::kError));
  EXPECT_EQ(frame.request_id, 42u);
  const ErrorReply reply = DecodeErrorReply(frame.payload);
  EXPECT_EQ(reply.code, ErrorCode::kOutOfBounds);
  EXPECT_EQ(reply.message, "outside");
  EXPECT_EQ(ErrorCodeName(reply.code), "OUT_OF_BOUNDS");
}

}  // namespace
