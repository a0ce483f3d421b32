// Running the `systole` command as a user would (SYSTOLE_CLI: the binary under test), and a
// per-test temporary directory for the files it writes.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace systole::cli_test {

struct CliResult {
  int exit_code = -1;
  std::string out;  // stdout, and stderr unless it was discarded
};

enum class Stderr { kWithStdout, kDiscard };

inline std::string Quote(const std::string& arg) {
  std::string quoted = "'";
  for (char c : arg) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// A shell command line, run to completion: its exit code and what it wrote to stdout.
inline CliResult RunShell(const std::string& command) {
  CliResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.out.append(buffer.data(), n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

inline CliResult Systole(const std::vector<std::string>& args, Stderr stderr_to = Stderr::kWithStdout) {
  std::string command = Quote(SYSTOLE_CLI);
  for (const std::string& arg : args) command += " " + Quote(arg);
  command += stderr_to == Stderr::kWithStdout ? " 2>&1" : " 2>/dev/null";
  return RunShell(command);
}

inline std::string Source(const std::string& relative) { return std::string(SYSTOLE_SOURCE_DIR) + "/" + relative; }

inline std::string ReadText(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

class TempDir : public ::testing::Test {
 protected:
  std::filesystem::path dir_ = std::filesystem::temp_directory_path() /
                               ("systole_cli_test_" + std::to_string(::getpid()) + "_" +
                                ::testing::UnitTest::GetInstance()->current_test_info()->name());
  void SetUp() override { std::filesystem::create_directories(dir_); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  void Write(const std::string& name, const std::string& text) const { std::ofstream(dir_ / name) << text; }
};

}  // namespace systole::cli_test
