// Thousands of random and mutated inputs for every reader: the assembler, the decoder and
// disassembler, and the bundle reader must answer each with a result or their own clean error,
// never a crash, a hang or another exception. Labelled `sanitize`, so it also runs under
// ASan/UBSan; the iteration counts keep it to seconds there. SYSTOLE_SEED replays a run.
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>

#include "tests/asm/asm_test_util.hpp"
#include "tests/util/zip_builder.hpp"
#include "toolchain/asm/assembler.hpp"
#include "toolchain/asm/bundle.hpp"
#include "toolchain/asm/disassembler.hpp"

namespace systole::assembly {
// The device image types (arch/image/program.hpp) this file builds and reads.
using image::Program;
using image::ValidateProgram;

namespace {

// Words and symbols the assembler knows, so that random lines get past the first token often.
const std::vector<std::string> kVocabulary = {"load",       "store",    "load_weights",
                                              "matmul",     "activate", "vector",
                                              "pool",       "sync",     "interrupt",
                                              "halt",       ".equ",     ".data",
                                              ".values",    ".input",   ".output",
                                              ".text",      ".config",  ".word",
                                              "mem",        "dram",     "stride",
                                              "row",        "col",      "rows",
                                              "elems",      "cols",     "pop",
                                              "accumulate", "ub",       "acc",
                                              "k",          "bias",     "bias_row",
                                              "func",       "scale",    "shift",
                                              "zp",         "lo",       "hi",
                                              "op",         "bcast",    "a",
                                              "b",          "dst",      "src",
                                              "in_w",       "out_h",    "out_w",
                                              "win_h",      "win_w",    "stride_h",
                                              "stride_w",   "code",     "wait",
                                              "signal",     "mxu",      "vector",
                                              "relu",       "clamp",    "max",
                                              "sum",        "at",       "dtype",
                                              "shape",      "int8",     "bf16",
                                              "fp32",       "int32",    "bits",
                                              "X",          "W",        "=",
                                              ",",          "|",        "(",
                                              ")",          "+",        "-",
                                              "*",          ";",        "#",
                                              "0",          "1",        "16",
                                              "-1",         "0x10",     "0xffffffffffffffff",
                                              "1.5",        "-0.0",     "1e39",
                                              "8x16",       "0x1g",     "99999999999999999999",
                                              "\t",         " ",        "\r",
                                              "\x01",       "\xff",     "small-int8"};

std::string RandomLine(std::mt19937_64& rng) {
  std::string line;
  const std::size_t tokens = rng() % 14;
  for (std::size_t i = 0; i < tokens; ++i) {
    line += kVocabulary[rng() % kVocabulary.size()];
    if (rng() % 3 != 0) line += ' ';
  }
  return line;
}

std::string RandomBytes(std::mt19937_64& rng, std::size_t max_length) {
  std::string text(rng() % (max_length + 1), '\0');
  for (char& c : text) c = static_cast<char>(rng() % 4 == 0 ? rng() % 256 : 32 + rng() % 96);
  return text;
}

// One small edit: delete, insert, replace or duplicate a span of characters.
void Mutate(std::string& text, std::mt19937_64& rng) {
  const std::size_t at = text.empty() ? 0 : rng() % text.size();
  switch (rng() % 5) {
    case 0:
      if (!text.empty()) text.erase(at, 1 + rng() % 4);
      break;
    case 1:
      text.insert(at, kVocabulary[rng() % kVocabulary.size()]);
      break;
    case 2:
      if (!text.empty()) text[at] = static_cast<char>(rng() % 256);
      break;
    case 3:
      text.insert(at, text.substr(at, rng() % 12));
      break;
    default:
      text.insert(at, "\n");
      break;
  }
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Assembles `source`: it either fails with diagnostics that all have a location and a
// message, or succeeds with a program whose disassembly reassembles to the same program.
void CheckAssembles(const std::string& source) {
  Program program;
  try {
    program = Assemble(source, "fuzz.s");
  } catch (const AssemblyError& error) {
    ASSERT_FALSE(error.diagnostics().empty());
    for (const Diagnostic& d : error.diagnostics()) {
      ASSERT_FALSE(d.message.empty());
      ASSERT_EQ(d.file, "fuzz.s");
    }
    return;
  } catch (const std::exception& error) {
    FAIL() << "unexpected exception " << error.what() << " for:\n" << source;
  }
  const std::string text = Disassemble(program);
  Program again;
  ASSERT_NO_THROW(again = Assemble(text)) << "source:\n" << source << "\ndisassembly:\n" << text;
  ASSERT_EQ(again, program) << text;
}

TEST(Robustness, AssemblerOnRandomBytes) {
  std::mt19937_64 rng(testing::TestSeed());
  for (int i = 0; i < 5000; ++i) CheckAssembles(RandomBytes(rng, 120));
}

TEST(Robustness, AssemblerOnRandomTokens) {
  std::mt19937_64 rng(testing::TestSeed());
  for (int i = 0; i < 5000; ++i) {
    std::string source;
    for (std::size_t lines = 1 + rng() % 6; lines > 0; --lines) source += RandomLine(rng) + "\n";
    CheckAssembles(source);
  }
}

TEST(Robustness, AssemblerOnMutatedExamples) {
  std::mt19937_64 rng(testing::TestSeed());
  std::vector<std::string> examples;
  for (const auto& path : testing::ExampleFiles()) examples.push_back(ReadFile(path));
  ASSERT_FALSE(examples.empty());
  for (int i = 0; i < 1500; ++i) {
    std::string source = examples[rng() % examples.size()];
    for (std::size_t edits = 1 + rng() % 4; edits > 0; --edits) Mutate(source, rng);
    CheckAssembles(source);
  }
}

TEST(Robustness, AssemblerOnMutatedLines) {
  // Single instruction and directive lines from the examples, mutated: mostly small programs,
  // so many more of them.
  std::mt19937_64 rng(testing::TestSeed());
  std::vector<std::string> lines;
  for (const auto& path : testing::ExampleFiles()) {
    std::istringstream in(ReadFile(path));
    for (std::string line; std::getline(in, line);) {
      if (!line.empty() && line[0] != ';') lines.push_back(line);
    }
  }
  for (int i = 0; i < 10000; ++i) {
    std::string source = lines[rng() % lines.size()];
    for (std::size_t edits = 1 + rng() % 3; edits > 0; --edits) Mutate(source, rng);
    CheckAssembles(source);
  }
}

TEST(Robustness, AssemblerOnHugeInputs) {
  CheckAssembles(std::string(200000, 'x'));
  CheckAssembles(std::string(100000, '\n'));
  CheckAssembles("load rows=" + std::string(50000, '-') + "1, elems=1");
  CheckAssembles("load rows=" + std::string(50000, '(') + "1");
  CheckAssembles(".data A, at=0x100000, dtype=int8\n.values " + [] {
    std::string values;
    for (int i = 0; i < 20000; ++i) values += "1, ";
    return values + "1";
  }());
}

TEST(Robustness, DecoderAndDisassemblerOnRandomWords) {
  std::mt19937_64 rng(testing::TestSeed());
  for (int i = 0; i < 20000; ++i) {
    isa::Word word;
    for (auto& byte : word) byte = static_cast<std::uint8_t>(rng());
    // Mostly valid opcodes with sparse garbage, so that decoding gets deep into the fields.
    if (rng() % 2 == 0) {
      word = isa::EncodeOrThrow(testing::RandomInstruction(rng));
      word[rng() % word.size()] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
    }
    isa::Instruction instruction;
    const auto error = isa::Decode(word, instruction);
    DisassemblyOptions options;
    options.element_type = rng() % 2 == 0 ? DType::kBf16 : DType::kInt8;
    const std::string text = DisassembleWord(word, options);
    ASSERT_EQ(error.has_value(), text.starts_with(".word")) << text;
    const Program program = Assemble(text);
    ASSERT_EQ(program.words.size(), 1u);
    ASSERT_EQ(program.words[0], word) << text;
  }
}

TEST(Robustness, BundleReaderOnMutatedBundles) {
  std::mt19937_64 rng(testing::TestSeed());
  std::vector<std::vector<std::uint8_t>> bundles;
  for (const auto& path : testing::ExampleFiles())
    bundles.push_back(SerializeBundle(AssembleFile(path)));
  int parsed = 0;
  for (int i = 0; i < 1500; ++i) {
    std::vector<std::uint8_t> bytes = bundles[rng() % bundles.size()];
    for (std::size_t edits = 1 + rng() % 4; edits > 0; --edits) {
      const std::size_t at = rng() % bytes.size();
      switch (rng() % 4) {
        case 0:
          bytes[at] = static_cast<std::uint8_t>(rng());
          break;
        case 1:
          bytes.resize(at + 1);
          break;
        case 2:
          bytes.insert(bytes.begin() + static_cast<std::ptrdiff_t>(at),
                       static_cast<std::uint8_t>(rng()));
          break;
        default:
          bytes[at] ^= 0xFF;
          break;
      }
    }
    try {
      const Program program = ParseBundle(bytes, "fuzz.sbin");
      ++parsed;  // an edit in a part that nothing reads (e.g. a timestamp)
      EXPECT_TRUE(ValidateProgram(program).empty());
    } catch (const BundleError& error) {
      ASSERT_NE(std::string_view(error.what()).find("fuzz.sbin: "), std::string_view::npos);
    } catch (const std::exception& error) {
      FAIL() << "unexpected exception: " << error.what();
    }
  }
  std::cout << "[ info     ] " << parsed << " of 1500 mutated bundles still parsed\n";
}

// Edits inside the entries of a well-formed zip (the CRCs match): these reach the manifest
// parser and the size checks, which random byte flips mostly do not (the CRC catches them).
TEST(Robustness, BundleReaderOnMutatedEntries) {
  std::mt19937_64 rng(testing::TestSeed());
  const auto entries =
      systole::testing::Unzip(SerializeBundle(AssembleFile(testing::ExampleFiles().front())));
  int parsed = 0;
  for (int i = 0; i < 1500; ++i) {
    auto mutated = entries;
    auto& [name, data] =
        mutated[rng() % 3 == 0 ? rng() % mutated.size() : 0];  // mostly the manifest
    for (std::size_t edits = 1 + rng() % 3; edits > 0; --edits) Mutate(data, rng);
    if (rng() % 8 == 0)
      mutated.erase(mutated.begin() + static_cast<std::ptrdiff_t>(rng() % mutated.size()));
    try {
      const Program program = ParseBundle(systole::testing::Zip(mutated), "fuzz.sbin");
      ++parsed;
      EXPECT_TRUE(ValidateProgram(program).empty());
    } catch (const BundleError& error) {
      ASSERT_NE(std::string_view(error.what()).find("fuzz.sbin: "), std::string_view::npos);
    } catch (const std::exception& error) {
      FAIL() << "unexpected exception: " << error.what() << " (" << name << ")";
    }
  }
  std::cout << "[ info     ] " << parsed << " of 1500 bundles with mutated entries still parsed\n";
}

TEST(Robustness, BundleReaderOnRandomBytes) {
  std::mt19937_64 rng(testing::TestSeed());
  for (int i = 0; i < 2000; ++i) {
    std::string bytes = RandomBytes(rng, 300);
    if (rng() % 2 == 0) bytes.insert(0, "PK\x03\x04", 4);  // a zip signature, then garbage
    const std::vector<std::uint8_t> data(bytes.begin(), bytes.end());
    EXPECT_THROW(ParseBundle(data), BundleError);
  }
}

}  // namespace
}  // namespace systole::assembly
