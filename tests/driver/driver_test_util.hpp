// Small programs for the driver tests, assembled from text.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "systole/device.hpp"
#include "systole/server.hpp"
#include "toolchain/asm/assembler.hpp"

namespace systole::driver_test {

// Polls `predicate` every 10 ms until it holds or `limit` has passed; its last answer.
template <typename Predicate>
bool Eventually(Predicate predicate, std::chrono::milliseconds limit = std::chrono::milliseconds(5000)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (predicate()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return predicate();
}

// A device server's options for a test: loopback on a port the kernel picks (endpoint() names it).
inline ServerOptions LoopbackServerOptions() {
  ServerOptions options;
  options.port = 0;
  return options;
}

// On `tiny` (4x4 int8): Y = X * scale, X and Y 2x4 int8, through the MXU with weights
// scale * identity. Every client of a test uses the same addresses, so a shared server must move
// all but one of them.
inline image::Program ScaleProgram(int scale) {
  return assembly::Assemble(fmt::format(R"(.config tiny
.data  W, at=0x1000, dtype=int8
.values {0},0,0,0, 0,{0},0,0, 0,0,{0},0, 0,0,0,{0}
.input  X, at=0x2000, dtype=int8, shape=2x4
.output Y, at=0x3000, dtype=int8, shape=2x4
load mem=ub, dram=X, stride=4, row=0, rows=2, elems=4, signal=mxu
load_weights dram=W, stride=4, rows=4, cols=4
matmul ub=0, acc=0, rows=2, k=4, pop, wait=load, signal=vector
activate acc=0, ub=8, rows=2, scale=1, wait=mxu, signal=store
store mem=ub, dram=Y, stride=4, row=8, rows=2, elems=4, wait=vector
halt
)",
                                        scale),
                            fmt::format("scale{}.s", scale));
}

inline std::vector<std::uint8_t> ScaleInput(int seed) {
  std::vector<std::uint8_t> x(8);
  for (int i = 0; i < 8; ++i) {
    x[static_cast<std::size_t>(i)] =
        static_cast<std::uint8_t>(static_cast<std::int8_t>((i * 3 + seed) % 7 - 3));
  }
  return x;
}

inline std::vector<std::uint8_t> ScaleExpected(int scale, const std::vector<std::uint8_t>& x) {
  std::vector<std::uint8_t> y;
  for (std::uint8_t v : x) {
    y.push_back(static_cast<std::uint8_t>(static_cast<std::int8_t>(v) * scale));
  }
  return y;
}

inline std::string Example(const std::string& name) {
  return std::string(SYSTOLE_SOURCE_DIR) + "/examples/asm/" + name;
}

inline void ExpectSameFunctionalCounters(const Counters& got, const Counters& expected,
                                         std::string_view what) {
  for (std::string_view counter : kFunctionalCounters) {
    EXPECT_EQ(got[counter], expected[counter]) << counter << ": " << what;
  }
}

// The LinkError message of opening `uri` on tiny, or a test failure if it opens.
inline std::string OpenError(const std::string& uri) {
  try {
    OpenLink(uri, LoadConfig("tiny"));
  } catch (const LinkError& error) {
    return error.what();
  }
  ADD_FAILURE() << uri << " opened";
  return "";
}

// What one run of a program gave: its outputs and every counter.
struct Outcome {
  std::vector<std::vector<std::uint8_t>> outputs;
  Counters counters;
};

// Loads `source`, fills its inputs with a pattern of `seed`, runs it once (counters cleared
// first) and reads everything back.
inline Outcome RunOnce(Device& device, const image::Program& source, int seed) {
  Program program = device.Load(source);
  for (std::size_t i = 0; i < source.inputs.size(); ++i) {
    std::vector<std::uint8_t> bytes(source.inputs[i].Bytes());
    for (std::size_t k = 0; k < bytes.size(); ++k) {
      bytes[k] = static_cast<std::uint8_t>((k * 7 + static_cast<std::size_t>(seed)) % 11);
    }
    program.WriteInput(i, bytes);
  }
  device.ClearCounters();
  EXPECT_TRUE(program.Launch().Wait(std::chrono::milliseconds(60000))) << device.uri() << " timed out";
  Outcome outcome;
  for (std::size_t i = 0; i < source.outputs.size(); ++i) {
    outcome.outputs.push_back(program.ReadOutput(i));
  }
  outcome.counters = device.ReadCounters();
  return outcome;
}

}  // namespace systole::driver_test
