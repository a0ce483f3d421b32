// Accuracy of VECTOR's transcendental functions (`math=`) as a specification: the maximum error
// in ULP against a float64 reference, exhaustively over all 65 536 bf16 inputs and over random
// fp32 inputs plus edge cases, for the fp32 result of the math step and for the bf16 value the
// unit stores. The bounds are read from docs/NUMERICS.md's ULP table — the test enforces what
// the document states — and the table's measured columns must equal what this test measures,
// so the document is this test's output. SYSTOLE_UPDATE_DOCS=1 rewrites those columns.
//
// ULP as JAX's accuracy page (docs.jax.dev, "Numerical accuracy") defines it, with FTZ:
// ulp(r) = 2^(clamp(floor(log2 |r|), emin, emax) - (p - 1)); a reference at or beyond the
// overflow threshold counts as infinity; infinity sits at 2^(emax+1) when measuring a finite
// reference in the top binade; values below 2^emin are contracted to 0 so that -2^emin, 0 and
// +2^emin are 1 ULP apart. The reference is the function of the flushed input in float64.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "sim/model/numerics.hpp"
#include "sim/model/transcendental.hpp"
#include "tests/util/test_seed.hpp"

namespace systole::model {
namespace {

using isa::VecMath;

constexpr std::string_view kDocPath = SYSTOLE_SOURCE_DIR "/docs/NUMERICS.md";
constexpr std::string_view kBegin = "<!-- BEGIN GENERATED: ulp-table (tests/model/math_accuracy_test.cpp) -->";
constexpr std::string_view kEnd = "<!-- END GENERATED: ulp-table -->";
// The random sample of `make test`; the issue's >= 10^7.
constexpr std::uint64_t kRandomInputs = 10'000'000;

struct Format {
  int precision;  // significand bits p
  int emin, emax;
};
constexpr Format kFp32{24, -126, 127};
constexpr Format kBf16{8, -126, 127};

double Reference(VecMath math, double x) {
  constexpr double kSqrt2OverPi = 0.79788456080286535588;
  switch (math) {
    case VecMath::kNone: return x;
    case VecMath::kExp: return std::exp(x);
    case VecMath::kRecip: return 1.0 / x;
    case VecMath::kRsqrt: return 1.0 / std::sqrt(x);
    case VecMath::kTanh: return std::tanh(x);
    case VecMath::kSigmoid: return 1.0 / (1.0 + std::exp(-x));
    // 0.5 (1 + tanh z) written as 1 / (1 + e^-2z), which float64 evaluates without the
    // cancellation of 1 + tanh(z) for negative z.
    case VecMath::kGeluTanh:
      return x / (1.0 + std::exp(-2.0 * kSqrt2OverPi * (x + 0.044715 * x * x * x)));
    case VecMath::kGeluErf: return 0.5 * x * std::erfc(-x / std::sqrt(2.0));
    case VecMath::kLog: return std::log(x);  // -inf at +-0, NaN below, inf at inf
  }
  return x;
}

double Ulp(double r, const Format& f) {
  const int e = std::isfinite(r) && r != 0 ? std::ilogb(r) : f.emin;
  return std::ldexp(1.0, std::clamp(e, f.emin, f.emax) - (f.precision - 1));
}

// Position on the FTZ number line: (-2^emin, 2^emin) contracts to 0.
double FtzPosition(double x, const Format& f) {
  const double tiny = std::ldexp(1.0, f.emin);
  const double gap = tiny - std::ldexp(1.0, f.emin - (f.precision - 1));
  if (std::fabs(x) < tiny) return 0.0;
  return std::copysign(std::fabs(x) - gap, x);
}

// The error of `computed` against the exact `reference` in ULP of format f; infinity for a
// NaN mismatch or a wrong infinity.
double UlpError(double computed, double reference, const Format& f) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (std::isnan(reference) || std::isnan(computed)) {
    return std::isnan(reference) && std::isnan(computed) ? 0.0 : kInf;
  }
  const double top = std::ldexp(1.0, f.emax + 1);
  const double max_float = top - std::ldexp(1.0, f.emax - (f.precision - 1));
  const double threshold = top - 0.5 * Ulp(max_float, f);
  if (std::fabs(reference) >= threshold) reference = std::copysign(kInf, reference);
  if (std::isinf(reference)) return computed == reference ? 0.0 : kInf;
  if (std::isinf(computed)) {
    if (std::fabs(reference) < std::ldexp(1.0, f.emax) || std::signbit(computed) != std::signbit(reference)) return kInf;
    computed = std::copysign(top, computed);
  }
  const double tiny = std::ldexp(1.0, f.emin);
  if (std::fabs(computed) < tiny && std::fabs(reference) < tiny) return 0.0;
  return std::fabs(FtzPosition(computed, f) - FtzPosition(reference, f)) / Ulp(reference, f);
}

struct Errors {
  double fp32 = 0, bf16 = 0;      // max ULP of the fp32 result / the stored bf16
  std::uint32_t worst_fp32 = 0;   // the input that gave it
  std::uint32_t worst_bf16 = 0;
  void Measure(VecMath math, std::uint32_t input) {
    const std::uint32_t result = ApplyMathF32(math, input);
    const double reference = Reference(math, FloatFromBits(FlushF32(input)));
    const double e32 = UlpError(FloatFromBits(result), reference, kFp32);
    const double e16 = UlpError(FloatFromBits(Bf16ToF32(F32ToBf16(result))), reference, kBf16);
    if (!(e32 <= fp32)) { fp32 = e32; worst_fp32 = input; }
    if (!(e16 <= bf16)) { bf16 = e16; worst_bf16 = input; }
  }
};

constexpr std::array kFunctions = {VecMath::kExp,     VecMath::kRecip,    VecMath::kRsqrt,
                                   VecMath::kTanh,    VecMath::kSigmoid,  VecMath::kGeluTanh,
                                   VecMath::kGeluErf, VecMath::kLog};

std::string_view Name(VecMath math) {
  static constexpr std::array<std::string_view, isa::kNumVecMath> kNames = {
      "none", "exp", "recip", "rsqrt", "tanh", "sigmoid", "gelu_tanh", "gelu_erf", "log"};
  return kNames[static_cast<unsigned>(math)];
}

// Edge cases: signed zeros, subnormals, the normal limits, infinities, NaNs and the overflow
// and underflow ranges of exp (and through it sigmoid, tanh and the GELUs); for log the inputs
// around 1 (a result near 0) and around sqrt 2 (where its reduction changes exponent).
std::vector<std::uint32_t> EdgeCases() {
  std::vector<std::uint32_t> bits = {
      0x00000000, 0x80000000, 0x00000001, 0x807FFFFF, 0x00800000, 0x80800000, 0x7F7FFFFF,
      0xFF7FFFFF, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0x3F800000,
      0xBF800000, 0x7E800000, 0x7F000000, 0x01000000, 0x3F000000};
  for (const float x : {88.72283f, 88.72284f, 88.8f, 89.0f, 89.1f, 100.0f, -87.33654f, -87.4f,
                        -103.97f, -104.0f, -104.1f, -200.0f, 9.0f, 9.1f, 10.0f, -13.0f, -13.3f,
                        -14.0f, -5.0f, 0.1733f, 0.1734f, 1e-20f, -1e-20f, 1e20f, -1e20f, 1.0f,
                        1.41421354f, 0.70710677f}) {
    const std::uint32_t b = BitsFromFloat(x);
    for (std::uint32_t d = 0; d < 5; ++d) bits.insert(bits.end(), {b + d, b - d});
  }
  return bits;
}

// The measured table: [function] -> {bf16 inputs, random fp32 inputs}.
using Measured = std::map<VecMath, std::array<Errors, 2>>;

Measured MeasureAll(std::uint64_t seed, std::uint64_t random_inputs) {
  Measured measured;
  const std::vector<std::uint32_t> edges = EdgeCases();
  for (const VecMath math : kFunctions) {
    Errors& bf16_inputs = measured[math][0];
    for (std::uint32_t b = 0; b < 0x10000; ++b) bf16_inputs.Measure(math, b << 16);
    Errors& fp32_inputs = measured[math][1];
    for (const std::uint32_t edge : edges) fp32_inputs.Measure(math, edge);
    // Half of the sample is uniform over bit patterns (every exponent, the specials), half
    // uniform in [-20, 20] where the functions change fastest.
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> near(-20.0f, 20.0f);
    for (std::uint64_t i = 0; i < random_inputs; ++i) {
      fp32_inputs.Measure(math, (i & 1) != 0 ? static_cast<std::uint32_t>(rng())
                                             : BitsFromFloat(near(rng)));
    }
  }
  return measured;
}

struct DocRow {
  double bound_fp32, bound_bf16;
  std::vector<std::string> cells;  // every cell of the row, trimmed
};

std::vector<std::string> SplitRow(const std::string& line) {
  std::vector<std::string> cells;
  std::stringstream in(line);
  std::string cell;
  std::getline(in, cell, '|');  // before the first bar
  while (std::getline(in, cell, '|')) {
    const auto first = cell.find_first_not_of(' '), last = cell.find_last_not_of(' ');
    cells.push_back(first == std::string::npos ? "" : cell.substr(first, last - first + 1));
  }
  if (!cells.empty() && cells.back().empty()) cells.pop_back();
  return cells;
}

std::string ReadDoc() {
  std::ifstream in{std::string(kDocPath)};
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The rows of the generated block: `| `name` | bound fp32 | bound bf16 | 4 measured | JAX... |`.
std::map<std::string, DocRow> ParseTable(const std::string& doc) {
  std::map<std::string, DocRow> rows;
  const auto begin = doc.find(kBegin), end = doc.find(kEnd);
  if (begin == std::string::npos || end == std::string::npos) return rows;
  std::stringstream block(doc.substr(begin, end - begin));
  std::string line;
  while (std::getline(block, line)) {
    if (line.rfind("| `", 0) != 0) continue;
    std::vector<std::string> cells = SplitRow(line);
    if (cells.size() < 7) continue;
    const std::string name = cells[0].substr(1, cells[0].size() - 2);
    rows[name] = DocRow{std::stod(cells[1]), std::stod(cells[2]), cells};
  }
  return rows;
}

std::string Figure(double ulp) { return std::isinf(ulp) ? "inf" : fmt::format("{:.2f}", ulp); }

TEST(MathAccuracy, EveryFunctionWithinTheBoundsOfDocsNumerics) {
  const bool replayed = std::getenv("SYSTOLE_SEED") != nullptr;
  const std::uint64_t seed = test::Seed();
  const Measured measured = MeasureAll(seed, kRandomInputs);

  std::string doc = ReadDoc();
  std::map<std::string, DocRow> rows = ParseTable(doc);
  ASSERT_EQ(rows.size(), kFunctions.size())
      << kDocPath << ": the ULP table between '" << kBegin << "' and '" << kEnd
      << "' needs one row per function";
  fmt::print("{:<10} {:>12} {:>12} {:>12} {:>12}   (max ULP; bf16-input / random-fp32-input "
             "sets, fp32 result / bf16 stored)\n", "math", "bf16 in:fp32", "bf16 in:bf16",
             "fp32 in:fp32", "fp32 in:bf16");
  for (const VecMath math : kFunctions) {
    const std::string name(Name(math));
    ASSERT_TRUE(rows.contains(name)) << kDocPath << ": no ULP-table row for `" << name << "`";
    DocRow& row = rows[name];
    const auto& [bf16_inputs, fp32_inputs] = measured.at(math);
    const std::array<std::string, 4> figures = {Figure(bf16_inputs.fp32), Figure(bf16_inputs.bf16),
                                                Figure(fp32_inputs.fp32), Figure(fp32_inputs.bf16)};
    fmt::print("{:<10} {:>12} {:>12} {:>12} {:>12}   worst fp32 inputs 0x{:08x} 0x{:08x}\n", name,
               figures[0], figures[1], figures[2], figures[3], fp32_inputs.worst_fp32,
               fp32_inputs.worst_bf16);
    for (const Errors& errors : {bf16_inputs, fp32_inputs}) {
      EXPECT_LE(errors.fp32, row.bound_fp32)
          << name << ": fp32 result, input 0x" << std::hex << errors.worst_fp32;
      EXPECT_LE(errors.bf16, row.bound_bf16)
          << name << ": bf16 stored, input 0x" << std::hex << errors.worst_bf16;
    }
    for (unsigned i = 0; i < figures.size(); ++i) {
      if (replayed && i >= 2) continue;  // another seed measures another random sample
      EXPECT_EQ(row.cells[3 + i], figures[i])
          << kDocPath << ": the `" << name << "` row's measured column " << 4 + i
          << " is not what this test measures (SYSTOLE_UPDATE_DOCS=1 rewrites it)";
      row.cells[3 + i] = figures[i];
    }
  }
  if (std::getenv("SYSTOLE_UPDATE_DOCS") != nullptr && !replayed) {
    // Rewrite each row's measured cells in place.
    for (const auto& [name, row] : rows) {
      const auto at = doc.find("| `" + name + "` |", doc.find(kBegin));
      const auto line_end = doc.find('\n', at);
      std::string line = "|";
      for (const std::string& cell : row.cells) line += " " + cell + " |";
      doc.replace(at, line_end - at, line);
    }
    std::ofstream{std::string(kDocPath)} << doc;
  }
}

// The ULP measure itself, on cases whose answer is known.
TEST(MathAccuracy, UlpMeasureFollowsJaxsDefinition) {
  EXPECT_EQ(UlpError(1.0, 1.0, kFp32), 0.0);
  EXPECT_EQ(UlpError(1.0 + std::ldexp(1.0, -23), 1.0, kFp32), 1.0);
  EXPECT_EQ(UlpError(1.0 + std::ldexp(1.0, -7), 1.0, kBf16), 1.0);
  EXPECT_EQ(UlpError(std::numeric_limits<double>::infinity(), 1e39, kFp32), 0.0);  // overflow
  EXPECT_TRUE(std::isinf(UlpError(3.0e38, 1e39, kFp32)));
  EXPECT_EQ(UlpError(0.0, 1e-39, kFp32), 0.0);                      // both below 2^-126
  EXPECT_EQ(UlpError(0.0, std::ldexp(1.0, -126), kFp32), 1.0);      // FTZ neighbours
  EXPECT_TRUE(std::isinf(UlpError(std::nan(""), 1.0, kFp32)));
  EXPECT_EQ(UlpError(std::nan(""), std::nan(""), kBf16), 0.0);
}

}  // namespace
}  // namespace systole::model
