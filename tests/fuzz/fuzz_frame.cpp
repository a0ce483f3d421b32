// libFuzzer target: the frame decoder of the link protocol (docs/PROTOCOL.md), fed arbitrary
// bytes in arbitrary chunks, and every payload parser on whatever frames come out. It must
// never crash, never read out of bounds, and re-encode every frame it accepts to the same bytes.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "systole/protocol.hpp"

namespace {

using namespace systole::protocol;

// Reads the payload as every request and reply layout; errors are expected, crashes are not.
void ParsePayloads(const Frame& frame) {
  try {
    DecodeErrorReply(frame.payload);
  } catch (const ProtocolError&) {
  }
  try {
    PayloadReader reader(frame.payload);
    reader.U16();
    reader.String(4096);
    reader.ExpectEnd();
  } catch (const ProtocolError&) {
  }
  try {
    PayloadReader reader(frame.payload);
    reader.U64();
    reader.U32();
    reader.U8();
    reader.Rest();
    reader.ExpectEnd();
  } catch (const ProtocolError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::size_t chunk = 1 + data[0] % 64;  // the first byte picks the chunk size
  const std::span<const std::uint8_t> stream(data + 1, size - 1);
  FrameDecoder decoder(4096);
  for (std::size_t at = 0; at < stream.size(); at += chunk) {
    decoder.Feed(stream.subspan(at, std::min(chunk, stream.size() - at)));
    Frame frame;
    for (;;) {
      const FrameDecoder::Status status = decoder.Next(frame);
      if (status == FrameDecoder::Status::kNeedMore) break;
      if (status == FrameDecoder::Status::kError) {
        if (!decoder.error().recoverable) return 0;
        continue;
      }
      ParsePayloads(frame);
      // A frame that decoded re-encodes to a frame that decodes to the same thing.
      FrameDecoder again(4096);
      again.Feed(EncodeFrame(frame.type, frame.request_id, frame.payload));
      Frame copy;
      if (again.Next(copy) != FrameDecoder::Status::kFrame || copy.payload != frame.payload ||
          copy.type != frame.type || copy.request_id != frame.request_id) {
        std::abort();
      }
    }
  }
  return 0;
}
