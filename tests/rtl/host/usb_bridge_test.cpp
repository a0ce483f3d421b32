// rtl/host/systole_usb_bridge against BridgeModel (the driver's codec plus the bridge's rules):
// every reply byte, the device's registers and memory, and the bytes moved on the host port.
// Directed requests of every type, hostile streams (bad checksum, magic, version, length,
// truncation, garbage, replies, ids out of order), and random mixes of both.
#include <gtest/gtest.h>

#include <iostream>
#include <random>

#include "tests/rtl/host/bridge_bench.hpp"
#include "tests/rtl/host/bridge_model.hpp"
#include "tests/rtl/util/rtl_test_util.hpp"

namespace {

using namespace systole;
using namespace systole::rtl::test;
using protocol::MessageType;
using Bytes = std::vector<std::uint8_t>;

Bytes Frame(MessageType type, std::uint32_t id, const Bytes& payload) {
  return protocol::EncodeFrame(static_cast<std::uint16_t>(type), id, payload);
}
Bytes Hello(std::uint32_t id, std::uint16_t version = 1) {
  protocol::PayloadWriter w;
  w.U16(version).String("token is ignored on usb");
  return Frame(MessageType::kHello, id, w.bytes());
}
Bytes ReadReg(std::uint32_t id, std::uint32_t offset) {
  protocol::PayloadWriter w;
  w.U32(offset);
  return Frame(MessageType::kReadRegister, id, w.bytes());
}
Bytes WriteReg(std::uint32_t id, std::uint32_t offset, std::uint32_t value) {
  protocol::PayloadWriter w;
  w.U32(offset).U32(value);
  return Frame(MessageType::kWriteRegister, id, w.bytes());
}
Bytes ReadMem(std::uint32_t id, std::uint64_t address, std::uint32_t length) {
  protocol::PayloadWriter w;
  w.U64(address).U32(length);
  return Frame(MessageType::kReadMemory, id, w.bytes());
}
Bytes WriteMem(std::uint32_t id, std::uint64_t address, const Bytes& data) {
  protocol::PayloadWriter w;
  w.U64(address).Bytes(data);
  return Frame(MessageType::kWriteMemory, id, w.bytes());
}
Bytes Wait(std::uint32_t id, std::uint32_t ms) {
  protocol::PayloadWriter w;
  w.U32(ms);
  return Frame(MessageType::kWait, id, w.bytes());
}
Bytes Cat(std::initializer_list<Bytes> parts) {
  Bytes all;
  for (const auto& p : parts) all.insert(all.end(), p.begin(), p.end());
  return all;
}

// The bench and the model side by side, on the same registers and memory contents.
class BridgeTest : public ::testing::Test {
 protected:
  BridgeTest()
      : seed_(Seed()),
        bench_(seed_, wave_.Path()),
        model_registers_(bench_.registers),
        model_memory_(bench_.memory),
        model_({.max_payload = kBenchMaxPayload, .memory_bytes = kBenchMemoryBytes},
               model_registers_, model_memory_),
        rng_(seed_) {}

  // One burst through both; returns the replies decoded, after checking they are identical.
  std::vector<protocol::Frame> Expect(const Bytes& bytes) {
    const Bytes expected = model_.Burst(bytes, bench_.irq);
    const Bytes got = bench_.Burst(bytes);
    EXPECT_EQ(got, expected) << "burst of " << bytes.size() << " bytes at cycle " << bench_.Cycle();
    EXPECT_EQ(bench_.registers, model_registers_);
    EXPECT_EQ(bench_.memory, model_memory_);
    EXPECT_EQ(bench_.host_bytes, model_.host_bytes());
    protocol::FrameDecoder decoder;
    decoder.Feed(got);
    std::vector<protocol::Frame> frames;
    protocol::Frame frame;
    while (decoder.Next(frame) == protocol::FrameDecoder::Status::kFrame) frames.push_back(frame);
    EXPECT_EQ(decoder.Buffered(), 0u) << "the bridge sent a partial frame";
    return frames;
  }
  // STATUS as the bridge's WAIT sees it, in the bench and the model.
  void SetStatus(std::uint32_t value) {
    bench_.registers[0x44 / 4] = value;
    model_registers_[0x44 / 4] = value;
  }
  static protocol::ErrorCode Code(const protocol::Frame& f) {
    EXPECT_EQ(f.type, 0x7F);
    return protocol::DecodeErrorReply(f.payload).code;
  }

  std::uint64_t seed_;
  Waveform wave_{false};
  BridgeBench bench_;
  std::vector<std::uint32_t> model_registers_;
  std::vector<std::uint8_t> model_memory_;
  BridgeModel model_;
  std::mt19937_64 rng_;
};

TEST_F(BridgeTest, HelloRegistersAndWait) {
  auto replies = Expect(Cat({Hello(7), WriteReg(8, 0x80, 0xA5A5F00D), ReadReg(9, 0x80),
                             ReadReg(10, 0x1FC), Wait(11, 3)}));
  ASSERT_EQ(replies.size(), 5u);
  protocol::PayloadReader hello(replies[0].payload);
  EXPECT_EQ(hello.U64(), kBenchMemoryBytes);
  EXPECT_EQ(hello.U32(), kBenchMaxPayload);
  EXPECT_EQ(replies[2].payload, (Bytes{0x0D, 0xF0, 0xA5, 0xA5}));
  EXPECT_EQ(replies[4].payload, Bytes{1}) << "STATUS is idle";
  SetStatus(0x0201);  // busy with two launches queued: WAIT times out
  replies = Expect(Cat({Wait(12, 0), Wait(13, 5)}));
  ASSERT_EQ(replies.size(), 2u);
  EXPECT_EQ(replies[1].payload, Bytes{0});
  bench_.irq = true;  // an interrupt ends the wait at once
  replies = Expect(Wait(14, 1000));
  ASSERT_EQ(replies.size(), 1u);
  EXPECT_EQ(replies[0].payload, Bytes{1});
}

TEST_F(BridgeTest, MemoryAtEveryAlignmentAndLength) {
  Expect(Hello(1));
  std::uint32_t id = 2;
  for (std::uint32_t length : {0u, 1u, 2u, 31u, 32u, 33u, 63u, 64u, 65u, 200u, 248u}) {
    for (std::uint64_t offset : {0u, 1u, 17u, 31u, 32u}) {
      Bytes data(length);
      for (auto& b : data) b = static_cast<std::uint8_t>(rng_());
      const std::uint64_t address = 0x100 * (length % 7) + offset;
      auto replies = Expect(Cat({WriteMem(id, address, data), ReadMem(id + 1, address, length)}));
      id += 2;
      ASSERT_EQ(replies.size(), 2u);
      EXPECT_EQ(replies[1].payload, data) << length << " bytes at 0x" << std::hex << address;
    }
  }
  // The whole payload limit and the last bytes of memory.
  auto replies = Expect(Cat({ReadMem(id, 0, kBenchMaxPayload),
                             ReadMem(id + 1, kBenchMemoryBytes - 5, 5),
                             WriteMem(id + 2, kBenchMemoryBytes - 1, {0x42})}));
  ASSERT_EQ(replies.size(), 3u);
  EXPECT_EQ(replies[0].payload.size(), kBenchMaxPayload);
}

TEST_F(BridgeTest, RefusedRequestsGetTheirErrorCodes) {
  using protocol::ErrorCode;
  auto replies = Expect(Cat({ReadReg(1, 0), Hello(5), ReadReg(5, 0), ReadReg(4, 0),
                             ReadReg(6, 0x200), ReadReg(7, 0x42), ReadMem(8, 8190, 3),
                             ReadMem(9, 0, kBenchMaxPayload + 1), WriteMem(10, 1ull << 40, {1}),
                             Frame(MessageType::kAllocate, 11, Bytes(25)),
                             Frame(MessageType::kFree, 12, Bytes(8)),
                             Frame(static_cast<MessageType>(0x33), 13, {}),
                             Frame(static_cast<MessageType>(0x82), 14, Bytes(4)),
                             Frame(MessageType::kReadRegister, 15, Bytes(3)),
                             Frame(MessageType::kWait, 16, Bytes(5)), Hello(17, 2),
                             ReadReg(18, 0)}));
  const std::vector<ErrorCode> expected = {
      ErrorCode::kOutOfOrder,  ErrorCode::kOutOfOrder,   ErrorCode::kOutOfOrder,
      ErrorCode::kBadRegister, ErrorCode::kBadRegister,  ErrorCode::kOutOfBounds,
      ErrorCode::kTooLarge,    ErrorCode::kOutOfBounds,  ErrorCode::kUnknownType,
      ErrorCode::kUnknownType, ErrorCode::kUnknownType,  ErrorCode::kOutOfOrder,
      ErrorCode::kMalformed,   ErrorCode::kMalformed,    ErrorCode::kBadVersion};
  ASSERT_EQ(replies.size(), expected.size() + 2);  // and HELLO and the last READ_REGISTER
  std::size_t e = 0;
  for (std::size_t i = 0; i < replies.size(); ++i) {
    if (replies[i].type == 0x7F) {
      EXPECT_EQ(Code(replies[i]), expected.at(e++)) << "reply " << i;
    }
  }
  EXPECT_EQ(e, expected.size());
  EXPECT_EQ(replies.back().type, 0x82) << "the session goes on after all of that";
}

TEST_F(BridgeTest, BrokenFramesAreAnsweredAndTheStreamRecovers) {
  using protocol::ErrorCode;
  Expect(Hello(1));
  Bytes corrupt = ReadReg(2, 0x80);
  corrupt[21] ^= 0x10;
  Bytes bad_magic = ReadReg(3, 0);
  bad_magic[1] = 'X';
  Bytes bad_version = ReadReg(4, 0);
  bad_version[4] = 9;
  Bytes too_large = ReadReg(5, 0);
  too_large[13] = 0x10;  // payload_bytes 4 + 4096
  const Bytes garbage = {0x00, 0xFF, 'S', 'Y', 'S', 'Y', 'L'};
  auto replies = Expect(Cat({corrupt, ReadReg(6, 0x80), bad_magic, ReadReg(7, 0x80), bad_version,
                             ReadReg(8, 0x80), too_large, ReadReg(9, 0x80), garbage,
                             ReadReg(10, 0x80)}));
  std::vector<std::uint16_t> types;
  for (const auto& r : replies) types.push_back(r.type);
  EXPECT_EQ(types, (std::vector<std::uint16_t>{0x7F, 0x82, 0x7F, 0x82, 0x7F, 0x82, 0x7F, 0x82,
                                                0x7F, 0x82}));
  ASSERT_EQ(replies.size(), 10u);
  EXPECT_EQ(Code(replies[0]), ErrorCode::kBadChecksum);
  EXPECT_EQ(replies[0].request_id, 2u);
  EXPECT_EQ(Code(replies[2]), ErrorCode::kBadMagic);
  EXPECT_EQ(Code(replies[4]), ErrorCode::kBadVersion);
  EXPECT_EQ(Code(replies[6]), ErrorCode::kTooLarge);
  EXPECT_EQ(replies[6].request_id, 5u);
  // Truncated frames: in the header, in the payload; then the bridge works again.
  for (std::size_t cut : {1u, 3u, 10u, 19u, 20u, 23u}) {
    Bytes truncated = WriteReg(11 + static_cast<std::uint32_t>(cut), 0x80, 1);
    truncated.resize(cut);
    replies = Expect(truncated);
    ASSERT_EQ(replies.size(), 1u) << cut;
    EXPECT_EQ(Code(replies[0]), ErrorCode::kMalformed);
  }
  replies = Expect(ReadReg(40, 0x80));
  ASSERT_EQ(replies.size(), 1u);
  EXPECT_EQ(replies[0].type, 0x82);
}

// The bridge's speed with a host that keeps up: every frame byte takes a cycle in, every reply
// byte two (CRC walk, then send), plus a handful per 32-byte word on the memory port.
TEST_F(BridgeTest, MemoryThroughputWithAFastHost) {
  bench_.full_speed = true;
  Expect(Hello(1));
  Bytes data(kBenchMaxPayload - 8);
  for (auto& b : data) b = static_cast<std::uint8_t>(rng_());
  const std::uint64_t pause = kBenchRxTimeout + 4;  // the quiet cycles Burst waits for
  std::uint64_t start = bench_.Cycle();
  Expect(WriteMem(2, 0x41, data));
  const double write = static_cast<double>(bench_.Cycle() - start - pause) / data.size();
  start = bench_.Cycle();
  Expect(ReadMem(3, 0x41, kBenchMaxPayload));
  const double read = static_cast<double>(bench_.Cycle() - start - pause) / kBenchMaxPayload;
  std::cout << "[ figures  ] WRITE_MEMORY " << write << " cycles/byte, READ_MEMORY " << read
            << " cycles/byte (" << kBenchMaxPayload << "-byte frames)\n";
  RecordProperty("write_cycles_per_byte", std::to_string(write));
  RecordProperty("read_cycles_per_byte", std::to_string(read));
  EXPECT_LT(write, 1.7);
  EXPECT_LT(read, 2.8);
}

// Random mixes of good requests and damaged ones: the model decides what each deserves.
TEST_F(BridgeTest, RandomStreams) {
  std::uint32_t id = 1;
  Expect(Hello(id++));
  for (int burst = 0; burst < 150; ++burst) {
    Bytes bytes;
    const int items = 1 + static_cast<int>(rng_() % 4);
    for (int i = 0; i < items; ++i) {
      const std::uint64_t address = rng_() % (kBenchMemoryBytes + 64);
      const std::uint32_t length = static_cast<std::uint32_t>(rng_() % (kBenchMaxPayload + 8));
      Bytes frame;
      switch (rng_() % 7) {
        case 0: frame = ReadReg(id, static_cast<std::uint32_t>(rng_() % 130) * 4); break;
        case 1: frame = WriteReg(id, static_cast<std::uint32_t>(rng_() % 130) * 4,
                                 static_cast<std::uint32_t>(rng_())); break;
        case 2: frame = ReadMem(id, address, length); break;
        case 3: {
          Bytes data(std::min<std::uint32_t>(length, kBenchMaxPayload - 8));
          for (auto& b : data) b = static_cast<std::uint8_t>(rng_());
          frame = WriteMem(id, address, data);
          break;
        }
        case 4: frame = Wait(id, static_cast<std::uint32_t>(rng_() % 4)); break;
        case 5: frame = Hello(id); break;
        default: frame = Frame(static_cast<MessageType>(rng_() % 0x100), id,
                               Bytes(rng_() % 12)); break;
      }
      id += rng_() % 8 == 0 ? 0 : 1;  // sometimes an id that does not increase
      switch (rng_() % 8) {  // damage
        case 0: frame[rng_() % frame.size()] ^= static_cast<std::uint8_t>(1 + rng_() % 255); break;
        case 1: if (i == items - 1) frame.resize(rng_() % frame.size()); break;
        case 2: frame.insert(frame.begin(), static_cast<std::uint8_t>(rng_())); break;
        default: break;
      }
      bytes.insert(bytes.end(), frame.begin(), frame.end());
    }
    bench_.irq = rng_() % 4 == 0;
    SetStatus(rng_() % 2 == 0 ? 0 : 1);
    Expect(bytes);
    if (HasFailure()) return;
  }
}

}  // namespace
