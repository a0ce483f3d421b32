// The RTL and its build must not restate a fact that arch/ owns and `systole gen` writes into
// rtl/generated/: a hand-written copy compiles today and drifts tomorrow. This test greps
//   rtl/ (except rtl/generated/)      for configuration defaults outside the tops (every name of
//                                     rtl/generated/params/*.vc, the DRAM geometry BG_BITS,
//                                     BA_BITS, COL_BITS included), overridable derived widths,
//                                     hand-written unit numbers, counter lanes and opcode field
//                                     masks;
//   tests/rtl/**/*.sv                 the test benches, Verilated as tops: their configuration
//                                     defaults must be `tiny`'s, their derived widths localparams;
//   every build file of the tree      (CMakeLists.txt, *.cmake, Makefiles, Yosys/Tcl/shell
//                                     scripts) for literal parameter lists (-GNAME=1,
//                                     -Ptop.NAME=1, chparam -set NAME 1): parameters come from
//                                     the generated rtl/generated/params/*.vc files
//                                     (systole_rtl_params).
// Every finding names the file, the line and the rule, so a failure says what to change.
// It reads files only (no model, no library), so it runs with the lint tests (label `lint`).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace systole {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot = SYSTOLE_SOURCE_DIR;

// The modules Verilated and synthesized as tops: the only ones with configuration defaults.
const std::set<std::string> kTops = {"rtl/systole_core.sv", "rtl/systole_soc.sv",
                                     "rtl/host/systole_usb_top.sv",
                                     "rtl/host/systole_pcie_top.sv",
                                     "rtl/host/systole_uart_top.sv"};
// The configuration the tops' defaults are (their parameters must equal its generated file).
constexpr const char* kTopDefaults = "rtl/generated/params/tiny.vc";
// Values an inner module may give a configuration parameter: outside every legal range, so
// that the module's elaboration-time checks reject a parent that forgets to pass it.
const std::set<std::string> kSentinels = {"0", "-1"};
// Widths derived from the configuration: localparams of the module that needs them.
const std::set<std::string> kDerived = {"EW", "W", "UB_AW", "ACC_AW", "AW"};

std::vector<std::string> Lines(const fs::path& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string Relative(const fs::path& path) {
  return fs::relative(path, kRoot).generic_string();
}

// Removes a // comment (the RTL and CMake files here put no "//" inside strings that matter).
std::string Code(const std::string& line, bool cmake) {
  const std::size_t at = line.find(cmake ? "#" : "//");
  return at == std::string::npos ? line : line.substr(0, at);
}

// -GNAME=VALUE lines of a generated parameter file.
std::map<std::string, std::string> VcParams(const fs::path& path) {
  std::map<std::string, std::string> params;
  static const std::regex kLine(R"(^-G([A-Z0-9_]+)=(.*)$)");
  for (const std::string& line : Lines(path)) {
    std::smatch m;
    if (std::regex_match(line, m, kLine)) params[m[1]] = m[2];
  }
  return params;
}

std::vector<fs::path> Files(const fs::path& dir, const std::string& extension,
                            const std::string& exclude = "") {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file() || entry.path().extension() != extension) continue;
    if (!exclude.empty() && Relative(entry.path()).rfind(exclude, 0) == 0) continue;
    files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<fs::path> RtlFiles() { return Files(kRoot / "rtl", ".sv", "rtl/generated/"); }

// The test benches: Verilated (and linted) as tops, with the parameters of a generated file.
std::vector<fs::path> TestBenchFiles() { return Files(kRoot / "tests/rtl", ".sv"); }

// Directories of the source tree that hold no hand-written build file of the project.
bool SkippedDirectory(const fs::path& path) {
  const std::string name = path.filename().string();
  const std::string relative = Relative(path);
  return name.rfind("build", 0) == 0 || name.rfind(".", 0) == 0 || name == "node_modules" ||
         name == "third_party" || name == "_deps" || relative == "rtl/generated";
}

// Build files: CMake, Makefiles and the scripts that run Verilator, Icarus or Yosys.
std::vector<fs::path> BuildFiles() {
  static const std::set<std::string> kNames = {"CMakeLists.txt", "Makefile", "GNUmakefile"};
  static const std::set<std::string> kExtensions = {".cmake", ".mk", ".ys", ".tcl", ".sh"};
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator(kRoot); it != fs::recursive_directory_iterator();
       ++it) {
    if (it->is_directory() && SkippedDirectory(it->path())) {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file()) continue;
    if (kNames.count(it->path().filename().string()) ||
        kExtensions.count(it->path().extension().string())) {
      files.push_back(it->path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::set<std::string> ConfigParamNames() {
  std::set<std::string> names;
  for (const fs::path& vc : Files(kRoot / "rtl/generated/params", ".vc", "rtl/generated/params/tests/")) {
    for (const auto& [name, value] : VcParams(vc)) names.insert(name);
  }
  return names;
}

// `parameter [type] NAME = VALUE` declarations (not localparam) of one line.
const std::regex kParameter(
    R"(\bparameter\s+(?:integer\s+|int\s+(?:unsigned\s+)?|logic\s*(?:\[[^\]]*\]\s*)?)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*([^,;)\n]+))");

std::string Trim(std::string text) {
  const auto first = text.find_first_not_of(" \t");
  const auto last = text.find_last_not_of(" \t");
  return first == std::string::npos ? "" : text.substr(first, last - first + 1);
}

TEST(RtlFacts, ConfigurationDefaultsOnlyOnTheTops) {
  const std::set<std::string> config = ConfigParamNames();
  ASSERT_FALSE(config.empty()) << "no rtl/generated/params/*.vc";
  const auto tiny = VcParams(kRoot / kTopDefaults);
  std::vector<fs::path> files = RtlFiles();
  const std::vector<fs::path> benches = TestBenchFiles();
  files.insert(files.end(), benches.begin(), benches.end());
  for (const fs::path& file : files) {
    const std::string name = Relative(file);
    const bool top = kTops.count(name) != 0 || name.rfind("tests/", 0) == 0;
    const std::vector<std::string> lines = Lines(file);
    for (std::size_t i = 0; i < lines.size(); ++i) {
      const std::string code = Code(lines[i], false);
      for (std::sregex_iterator it(code.begin(), code.end(), kParameter), end; it != end; ++it) {
        const std::string param = (*it)[1];
        const std::string value = Trim((*it)[2]);
        if (!config.count(param)) continue;
        if (top) {
          EXPECT_EQ(value, tiny.at(param))
              << name << ":" << i + 1 << ": a top's (or test bench's) default of " << param
              << " must be the one of " << kTopDefaults;
        } else {
          EXPECT_TRUE(kSentinels.count(value))
              << name << ":" << i + 1 << ": configuration parameter " << param << " = " << value
              << " outside a top: take it from the parent (default 0 or -1, rejected by an "
                 "elaboration check)";
        }
      }
    }
  }
}

TEST(RtlFacts, DerivedWidthsAreLocalparams) {
  std::vector<fs::path> files = RtlFiles();
  const std::vector<fs::path> benches = TestBenchFiles();
  files.insert(files.end(), benches.begin(), benches.end());
  for (const fs::path& file : files) {
    const std::vector<std::string> lines = Lines(file);
    for (std::size_t i = 0; i < lines.size(); ++i) {
      const std::string code = Code(lines[i], false);
      for (std::sregex_iterator it(code.begin(), code.end(), kParameter), end; it != end; ++it) {
        EXPECT_FALSE(kDerived.count((*it)[1]))
            << Relative(file) << ":" << i + 1 << ": derived width " << (*it)[1]
            << " is an overridable parameter; make it a localparam";
      }
    }
  }
}

TEST(RtlFacts, NoHandWrittenUnitNumbersLanesOrFieldMasks) {
  // Names a hand-written copy would carry: unit names and counter names, with or without a
  // BYTES_ prefix, behind a short prefix (U_LOAD, P_MXU_BUSY, L_CYCLES), and opcode masks
  // (USED_*). They are read from the generated headers themselves (UNIT_*, PERF_LANE_*), so the
  // test needs no C++ definition of its own.
  std::vector<std::string> names;
  static const std::regex kUnit(R"(^localparam integer UNIT_([A-Z_]+) = [0-9]+;)");
  static const std::regex kLane(R"(^localparam integer PERF_LANE_([A-Z_]+) = [0-9]+;)");
  for (const std::string& line : Lines(kRoot / "rtl/generated/systole_isa.svh")) {
    std::smatch m;
    if (std::regex_search(line, m, kUnit) && m[1] != "SEQ") names.push_back(m[1]);
  }
  for (const std::string& line : Lines(kRoot / "rtl/generated/systole_regs.svh")) {
    std::smatch m;
    if (!std::regex_search(line, m, kLane) || m[1] == "BITS") continue;
    const std::string name = m[1];
    names.push_back(name);
    if (name.rfind("BYTES_", 0) == 0) names.push_back(name.substr(6));
  }
  ASSERT_GE(names.size(), 5u) << "no UNIT_* names in rtl/generated/systole_isa.svh";
  std::string alternatives;
  for (const std::string& name : names) alternatives += (alternatives.empty() ? "" : "|") + name;
  const std::regex copy(R"(\blocalparam\b[^;]*\b(?:[A-Z]{1,2}_(?:)" + alternatives +
                        R"()|USED_[A-Z_]+)\s*=\s*[0-9'])");
  for (const fs::path& file : RtlFiles()) {
    const std::vector<std::string> lines = Lines(file);
    for (std::size_t i = 0; i < lines.size(); ++i) {
      const std::string code = Code(lines[i], false);
      EXPECT_FALSE(std::regex_search(code, copy))
          << Relative(file) << ":" << i + 1 << ": a hand-written unit number, counter lane or "
          << "field mask; use the generated UNIT_*, PERF_LANE_* or <OPCODE>_USED names: "
          << lines[i];
    }
  }
}

TEST(RtlFacts, NoLiteralParameterListsInTheBuild) {
  const std::vector<fs::path> files = BuildFiles();
  ASSERT_GT(files.size(), 20u) << "no CMakeLists.txt found under " << kRoot;
  // A parameter given a number by hand: Verilator -G, Icarus -P, Yosys chparam.
  const std::regex literal(
      R"((-G[A-Z][A-Z0-9_]*=[0-9'])|(-P[A-Za-z_][A-Za-z0-9_]*\.[A-Z][A-Z0-9_]*=[0-9'])|((-set|-chparam)\s+[A-Z][A-Z0-9_]*\s+[0-9']))");
  for (const fs::path& file : files) {
    const std::vector<std::string> lines = Lines(file);
    for (std::size_t i = 0; i < lines.size(); ++i) {
      const std::string code = Code(lines[i], true);
      EXPECT_FALSE(std::regex_search(code, literal))
          << Relative(file) << ":" << i + 1 << ": a literal parameter list; put the values in a "
          << "configuration or tests/rtl/params.toml and read the generated file with "
          << "systole_rtl_params: " << lines[i];
    }
  }
}

}  // namespace
}  // namespace systole
