// `systole array-view`: examples/asm/gemm_tiny.s runs on `rtl` (tiny, 4×4 int8) with --fst, and
// the frames read back from the waveform must show what a weight-stationary systolic array does,
// checked against the program's own matrices: input element X[i][t] reaches PE (t, j) at cycle
// c0 + i + t + j (enters row t skewed by t, moves right one PE a cycle), multiplies the weight
// W[t][j] held there, and the bottom row emits Σ_t X[i][t]·W[t][j] one cycle later; the second
// weight tile shifts into the other bank while the first still computes (double buffering). Then
// the page: self-contained, with the frames inlined.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "sim/rtl/array_waveform.hpp"
#include "tests/cli/cli_runner.hpp"

namespace systole::cli_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// examples/asm/gemm_tiny.s
constexpr int kRows = 6, kK = 4;
int X(int i, int k) { return i + k - 2; }
int W1(int k, int j) { return k == j ? 2 : 0; }
int W2(int k, int j) { return 1 + k * 4 + j; }

int Int8(std::uint32_t bits) { return static_cast<std::int8_t>(bits & 0xff); }
int Int32(std::uint32_t bits) { return static_cast<std::int32_t>(bits); }

class ArrayView : public TempDir {
 protected:
  void SetUp() override {
    TempDir::SetUp();
    const CliResult run = Systole({"run", Source("examples/asm/gemm_tiny.s"), "--device", "rtl", "--fst", Path("g.fst")});
    ASSERT_EQ(run.exit_code, 0) << run.out;
    frames_ = rtl::ReadArrayWaveform(Path("g.fst"));
  }

  // The first cycle at which PE (0, 0) multiplies X[0][0] with W1: the first MATMUL's start.
  std::optional<std::size_t> FirstMatmulCycle() const {
    for (std::size_t c = 0; c + 1 < frames_.cycles.size(); ++c) {
      const trace::PeState& pe = frames_.At(c, 0, 0);
      const std::uint32_t w = pe.bank ? pe.w1 : pe.w0;
      if (Int8(pe.x) == X(0, 0) && Int8(w) == W1(0, 0) && Int8(frames_.At(c + 1, 0, 0).x) == X(1, 0)) return c;
    }
    return std::nullopt;
  }

  trace::ArrayFrames frames_;
};

TEST_F(ArrayView, InputsEnterSkewedMeetHeldWeightsAndSumsFlowDown) {
  ASSERT_EQ(frames_.rows, 4u);
  ASSERT_EQ(frames_.cols, 4u);
  EXPECT_FALSE(frames_.bf16);
  const std::optional<std::size_t> c0 = FirstMatmulCycle();
  ASSERT_TRUE(c0.has_value()) << "X[0][0] never met W1[0][0] at PE (0, 0)";
  for (int i = 0; i < kRows; ++i) {
    for (int t = 0; t < kK; ++t) {
      for (int j = 0; j < 4; ++j) {
        const std::size_t c = *c0 + static_cast<std::size_t>(i + t + j);
        const trace::PeState& pe = frames_.At(c, static_cast<std::size_t>(t), static_cast<std::size_t>(j));
        EXPECT_EQ(Int8(pe.x), X(i, t)) << "row " << i << " at PE (" << t << ", " << j << "), cycle " << c;
        EXPECT_EQ(Int8(pe.bank ? pe.w1 : pe.w0), W1(t, j)) << "weight at PE (" << t << ", " << j << ")";
      }
    }
    for (int j = 0; j < 4; ++j) {
      int expected = 0;
      for (int t = 0; t < kK; ++t) expected += X(i, t) * W1(t, j);
      const std::size_t c = *c0 + static_cast<std::size_t>(i + 3 + j + 1);
      EXPECT_EQ(Int32(frames_.At(c, 3, static_cast<std::size_t>(j)).psum), expected)
          << "output row " << i << ", column " << j << " at cycle " << c;
    }
  }
}

TEST_F(ArrayView, TheSecondTileShiftsIntoTheOtherBankWhileTheFirstComputes) {
  const std::optional<std::size_t> c0 = FirstMatmulCycle();
  ASSERT_TRUE(c0.has_value());
  // The first MATMUL's inputs are in the array until c0 + 5 + 3 + 3; a load into the bank they do
  // not use happens before that.
  bool overlapped = false;
  for (std::size_t c = *c0; c <= *c0 + 11; ++c) {
    for (std::size_t t = 0; t < 4; ++t) {
      for (std::size_t j = 0; j < 4; ++j) {
        const trace::PeState& pe = frames_.At(c, t, j);
        if (pe.loading && pe.load_bank != pe.bank) overlapped = true;
      }
    }
  }
  EXPECT_TRUE(overlapped) << "no weight load into the idle bank while the first tile computed";
  // And the second MATMUL multiplies W2 from that bank: find X[0][0] meeting W2[0][0].
  bool second = false;
  for (std::size_t c = *c0; c < frames_.cycles.size() && !second; ++c) {
    const trace::PeState& pe = frames_.At(c, 0, 0);
    if (Int8(pe.x) != X(0, 0) || Int8(pe.bank ? pe.w1 : pe.w0) != W2(0, 0)) continue;
    second = true;
    for (std::size_t t = 0; t < 4; ++t) {
      for (std::size_t j = 0; j < 4; ++j) {
        const trace::PeState& held = frames_.At(c + t + j, t, j);
        EXPECT_EQ(Int8(held.bank ? held.w1 : held.w0), W2(static_cast<int>(t), static_cast<int>(j)));
        const trace::PeState& first = frames_.At(*c0 + t + j, t, j);
        EXPECT_NE(held.bank, first.bank) << "the two tiles share a bank at PE (" << t << ", " << j << ")";
      }
    }
  }
  EXPECT_TRUE(second) << "the second MATMUL never multiplied X[0][0] with W2[0][0]";
}

TEST_F(ArrayView, WritesOneSelfContainedPage) {
  const CliResult view = Systole({"array-view", Path("g.fst"), "-o", Path("view.html"), "--first", "10", "--cycles", "150"});
  ASSERT_EQ(view.exit_code, 0) << view.out;
  EXPECT_THAT(view.out, HasSubstr("4x4 array, 150 cycles (from cycle 10)"));
  std::ifstream in(Path("view.html"));
  std::stringstream page;
  page << in.rdbuf();
  const std::string html = page.str();
  EXPECT_THAT(html, HasSubstr(R"(<script id="frames" type="application/json">{"bf16":false,"cols":4,"cycles":[10,11,)"));
  EXPECT_THAT(html, HasSubstr("4&times;4 int8 (int32 partial sums) array"));
  // Nothing is fetched: no external scripts, styles or images.
  EXPECT_THAT(html, Not(HasSubstr("src=")));
  EXPECT_THAT(html, Not(HasSubstr("href=")));
  EXPECT_THAT(html, Not(HasSubstr("https://")));
}

// The page in a real browser: headless Chromium (Debian's, installed by make setup) opens it at
// `#cycle=N`, runs its script, and the array it drew must hold that cycle's values.
TEST_F(ArrayView, HeadlessChromiumDrawsTheCycleTheLinkNames) {
  if (RunShell("command -v chromium").out.empty()) GTEST_SKIP() << "chromium is not installed (make setup installs it)";
  const std::optional<std::size_t> c0 = FirstMatmulCycle();
  ASSERT_TRUE(c0.has_value());
  ASSERT_EQ(Systole({"array-view", Path("g.fst"), "-o", Path("view.html")}).exit_code, 0);
  const std::size_t index = *c0 + 2;  // two cycles into the first MATMUL
  const std::string url = "file://" + Path("view.html") + "#cycle=" + std::to_string(frames_.cycles[index].cycle);
  const std::string browser = "chromium --headless --no-sandbox --disable-gpu --user-data-dir=" + Quote(Path("profile"));
  const std::string dom = RunShell(browser + " --dump-dom " + Quote(url) + " 2>/dev/null").out;
  ASSERT_THAT(dom, HasSubstr("cycle " + std::to_string(frames_.cycles[index].cycle) + " ("));
  // The SVG's texts in drawing order: per array row "row t", then each PE's x, w, w′, Σ.
  std::vector<std::string> texts;
  const std::regex text_element("<text[^>]*>([^<]*)</text>");
  for (auto it = std::sregex_iterator(dom.begin(), dom.end(), text_element); it != std::sregex_iterator(); ++it) {
    texts.push_back((*it)[1]);
  }
  ASSERT_GE(texts.size(), 4u * (1 + 4 * 4));
  for (int t = 0; t < 4; ++t) {
    const std::size_t row_at = static_cast<std::size_t>(t) * (1 + 4 * 4);
    EXPECT_EQ(texts[row_at], "row " + std::to_string(t));
    for (int j = 0; j < 4; ++j) {
      const std::size_t at = row_at + 1 + static_cast<std::size_t>(j) * 4;
      const int i = 2 - t - j;  // the input row at PE (t, j) two cycles in
      if (i < 0) continue;  // the wavefront has not reached it yet
      // The page shows "?" for a register that still holds its first sample (the simulator's
      // power-up fill): an input equal to that fill is indistinguishable from it.
      bool written = false;
      for (std::size_t c = 1; c <= index && !written; ++c) {
        written = frames_.At(c, static_cast<std::size_t>(t), static_cast<std::size_t>(j)).x !=
                  frames_.At(0, static_cast<std::size_t>(t), static_cast<std::size_t>(j)).x;
      }
      EXPECT_EQ(texts[at], written ? "x " + std::to_string(X(i, t)) : std::string("x ?"))
          << "PE (" << t << ", " << j << ")";
      if (!written) {
        EXPECT_EQ(Int8(frames_.At(0, static_cast<std::size_t>(t), static_cast<std::size_t>(j)).x), X(i, t));
      }
      EXPECT_THAT(texts[at + 1], ::testing::EndsWith(" " + std::to_string(W1(t, j))));
    }
  }
  // A screenshot for people to look at, and proof that the page renders.
  RunShell(browser + " --hide-scrollbars --window-size=760,700 --screenshot=" + Quote(Path("view.png")) + " " +
             Quote(url) + " 2>/dev/null");
  std::ifstream png(Path("view.png"), std::ios::binary);
  std::string header(8, '\0');
  png.read(header.data(), 8);
  EXPECT_EQ(header, std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_GT(std::filesystem::file_size(Path("view.png")), 10'000u);
}

TEST_F(ArrayView, RefusesWhatIsNotAnArrayWaveform) {
  Write("junk.fst", "not a waveform");
  const CliResult junk = Systole({"array-view", Path("junk.fst"), "-o", Path("v.html")});
  EXPECT_EQ(junk.exit_code, 1);
  EXPECT_THAT(junk.out, HasSubstr("junk.fst: not an FST waveform"));
  EXPECT_FALSE(std::filesystem::exists(Path("v.html")));
}

}  // namespace
}  // namespace systole::cli_test
