// The Vitis HLS testbench of the Systole kernels: reads golden vectors written by the golden
// model (argv[1]; see golden_vectors.hpp), runs every case through the top functions, and
// returns 0 only if every output byte matches — Vitis's C simulation and C/RTL co-simulation
// take that as the verdict. Built and run in `make test` as well (hls_vitis_tb_*), with g++ in
// C++17 mode, so the testbench that Vitis users run is known to pass.
#include <cstdint>
#include <exception>
#include <fstream>
#include <iostream>
#include <vector>

#include "hls/vitis/golden_vectors.hpp"
#include "hls/vitis/run_case.hpp"

namespace {

int Mismatches(const std::vector<std::uint8_t>& got, const std::vector<std::uint8_t>& want) {
  if (got.size() != want.size()) return 1;
  int count = 0;
  for (std::size_t i = 0; i < got.size(); ++i) count += got[i] != want[i] ? 1 : 0;
  return count;
}

}  // namespace

int main(int argc, char** argv) {
  namespace v = systole::hls::vectors;
  namespace config = systole::hls::config;
  if (argc != 2) {
    std::cerr << "usage: " << argv[0] << " VECTORS.bin\n";
    return 2;
  }
  try {
    std::ifstream in(argv[1], std::ios::binary);
    if (!in) throw std::runtime_error(std::string("cannot read ") + argv[1]);
    const v::Header header = v::ReadHeader(in);
    if (header.rows != config::kRows || header.cols != config::kCols ||
        header.width != config::kUbRowElems || header.bf16 != (config::kBf16 ? 1u : 0u)) {
      std::cerr << argv[1] << ": vectors for a " << header.rows << "x" << header.cols
                << (header.bf16 != 0 ? " bf16" : " int8") << " array, but the kernels are built for "
                << config::kName << "\n";
      return 1;
    }
    int failed = 0;
    for (std::uint32_t i = 0; i < header.cases; ++i) {
      const std::uint32_t kind = v::GetWord(in);
      int bad = 0;
      if (kind == v::kMatmulActivate) {
        const v::MatmulActivateCase c = v::ReadMatmulActivate(in, header);
        bad = Mismatches(v::RunTops(c), c.y);
      } else if (kind == v::kVector) {
        const v::VectorCase c = v::ReadVector(in, header);
        bad = Mismatches(v::RunTops(c), c.y);
      } else if (kind == v::kReduce) {
        const v::ReduceCase c = v::ReadReduce(in, header);
        bad = Mismatches(v::RunTops(c), c.y);
      } else {
        throw std::runtime_error("case " + std::to_string(i) + ": unknown kind " + std::to_string(kind));
      }
      if (bad != 0) {
        ++failed;
        std::cerr << "case " << i << " (kind " << kind << "): " << bad << " bytes differ\n";
      }
    }
    std::cout << header.cases - static_cast<std::uint32_t>(failed) << "/" << header.cases
              << " cases match the golden model (" << config::kName << ")\n";
    return failed == 0 ? 0 : 1;
  } catch (const std::exception& error) {
    std::cerr << argv[1] << ": " << error.what() << "\n";
    return 1;
  }
}
