// golden_vectors OUT.bin [CASES] [SEED]: writes golden-vector cases (hls/vitis/golden_vectors.hpp)
// for the configuration this program was built for, each answered by the golden model on the
// ref device — the file the Vitis testbench (hls/vitis/systole_kernels_tb.cpp) checks against.
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iostream>
#include <string>

#include "tests/hls/ref_cases.hpp"

int main(int argc, char** argv) {
  using namespace systole::hls;
  if (argc < 2 || argc > 4) {
    std::cerr << "usage: " << argv[0] << " OUT.bin [CASES per kind, default 40] [SEED, default 1]\n";
    return 2;
  }
  try {
    const int cases = argc > 2 ? std::stoi(argv[2]) : 40;
    const std::uint64_t seed = argc > 3 ? std::stoull(argv[3]) : 1;
    if (cases < 1) throw std::invalid_argument("CASES must be at least 1");
    std::ofstream out(argv[1], std::ios::binary);
    if (!out) throw std::runtime_error(std::string("cannot write ") + argv[1]);
    test_cases::Operands rand(seed);
    vectors::WriteHeader(out, test_cases::HeaderOfThisConfig(static_cast<std::uint32_t>(3 * cases)));
    for (int i = 0; i < cases; ++i) vectors::Write(out, test_cases::MatmulActivate(rand, i));
    for (int i = 0; i < cases; ++i) vectors::Write(out, test_cases::Vector(rand));
    for (int i = 0; i < cases; ++i) vectors::Write(out, test_cases::Reduce(rand));
    if (!out.flush()) throw std::runtime_error(std::string("cannot write ") + argv[1]);
    std::cout << "wrote " << 3 * cases << " cases for configuration " << config::kName << " to "
              << argv[1] << " (seed " << seed << ")\n";
  } catch (const std::exception& error) {
    std::cerr << argv[0] << ": " << error.what() << "\n";
    return 1;
  }
  return 0;
}
