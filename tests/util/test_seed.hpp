// Seeds that are printed and can be replayed, for every randomized test (RTL, HLS, models).
//
//   const std::uint64_t seed = systole::test::Seed();   // prints "seed 12345 (replay: ...)"
//
// Seed(): $SYSTOLE_SEED if set, else a fixed value derived from the test's name, so CI is
// repeatable and a failure is replayed with SYSTOLE_SEED=N ctest -R <test>.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <string>

namespace systole::test {

// The running test as "Suite.Name", with '/' (parameterised tests) made '_' for file names.
inline std::string TestName() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = std::string(info->test_suite_name()) + "." + info->name();
  for (char& c : name) {
    if (c == '/') c = '_';
  }
  return name;
}

inline std::uint64_t Seed() {
  std::uint64_t seed = std::hash<std::string>{}(TestName()) & 0xffffffffu;
  if (const char* env = std::getenv("SYSTOLE_SEED")) seed = std::strtoull(env, nullptr, 0);
  // CTest names parameterised tests with '/', which TestName() turns into '_' (a file name):
  // '.' matches either in the ctest -R regex.
  std::string pattern = TestName();
  for (char& c : pattern) {
    if (c == '_') c = '.';
  }
  std::cout << "[ seed     ] " << seed << "  (replay: SYSTOLE_SEED=" << seed << " ctest -R '"
            << pattern << "')\n";
  ::testing::Test::RecordProperty("seed", std::to_string(seed));
  return seed;
}

}  // namespace systole::test
