// Conventions every RTL test follows: seeds that are printed and can be replayed, and
// waveforms that are kept for a failing test and deleted for a passing one.
//
//   const std::uint64_t seed = systole::rtl::test::Seed();   // prints "seed 12345 (…)"
//   systole::rtl::test::Waveform wave;                        // build/waves/<Suite>.<Test>.fst
//   systole::rtl::Harness<Vfoo_tiny> sim("foo", {.trace_path = wave.Path(), .seed = seed});
//
// Seed(): $SYSTOLE_SEED if set, else a fixed value derived from the test's name, so CI is
// repeatable and a failure is replayed with SYSTOLE_SEED=N ctest -R <test>.
// Waveform: traces only when the test asks for it (directed tests of small blocks always do) or
// when $SYSTOLE_WAVES=1; the file is removed when the test passes and kept, with its path
// printed, when it fails.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <string>

#include "tests/util/test_seed.hpp"

namespace systole::rtl::test {

using systole::test::Seed;      // tests/util/test_seed.hpp
using systole::test::TestName;

inline bool WavesRequested() {
  const char* env = std::getenv("SYSTOLE_WAVES");
  return env != nullptr && std::string(env) != "0";
}

class Waveform {
 public:
  // `always`: trace even without $SYSTOLE_WAVES (cheap for small blocks).
  explicit Waveform(bool always = true)
      : enabled_(always || WavesRequested()),
        path_(std::filesystem::path(SYSTOLE_WAVES_DIR) / (TestName() + ".fst")) {}
  ~Waveform() {
    if (!enabled_) return;
    if (::testing::Test::HasFailure()) {
      std::cout << "[ waveform ] kept: " << path_.string() << "\n";
    } else {
      std::error_code ignored;
      std::filesystem::remove(path_, ignored);
    }
  }
  Waveform(const Waveform&) = delete;
  Waveform& operator=(const Waveform&) = delete;
  // Where to trace, or empty when this test does not trace.
  std::filesystem::path Path() const { return enabled_ ? path_ : std::filesystem::path(); }

 private:
  bool enabled_;
  std::filesystem::path path_;
};

}  // namespace systole::rtl::test
