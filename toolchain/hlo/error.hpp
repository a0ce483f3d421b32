// HloError: every failure of the HLO front end — parse, verification, interpretation — is
// reported as one exception type whose message says where (file:line:column when the text is
// known) and what was expected.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace systole::hlo {

// A position in HLO text; line and column are 1-based, 0 means "unknown".
struct SourceLocation {
  std::string file;
  std::uint32_t line = 0;
  std::uint32_t column = 0;

  bool Known() const { return line != 0; }
  std::string ToString() const;  // "file:line:col", "line:col" without a file, "" when unknown
};

class HloError : public std::runtime_error {
 public:
  HloError(const SourceLocation& location, const std::string& message);
  explicit HloError(const std::string& message) : HloError(SourceLocation{}, message) {}

  const SourceLocation& location() const { return location_; }
  // The message without the location prefix.
  const std::string& detail() const { return detail_; }

 private:
  SourceLocation location_;
  std::string detail_;
};

}  // namespace systole::hlo
