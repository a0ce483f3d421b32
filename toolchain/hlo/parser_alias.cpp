// The module header's input_output_alias attribute: which outputs may reuse which parameters'
// buffers (JAX's donated arguments). XLA prints it as
//   input_output_alias={ {0}: (0, {}, may-alias), {1}: (1, {}, may-alias) }
// with the output's tuple index path first, then (parameter number, index path inside the
// parameter, kind). Older XLA leaves the kind out.
#include <fmt/core.h>

#include "toolchain/hlo/parser_values.hpp"

namespace systole::hlo::detail {

std::vector<InputOutputAlias> ParseInputOutputAlias(Cursor& cursor) {
  std::vector<InputOutputAlias> aliases;
  cursor.Expect("{");
  if (cursor.TryConsume("}")) return aliases;
  do {
    InputOutputAlias alias;
    alias.location = cursor.Location();
    alias.output_index = ParseIntegerList(cursor);
    cursor.Expect(":");
    cursor.Expect("(");
    alias.parameter = cursor.Integer("a parameter number");
    if (alias.parameter < 0) {
      cursor.FailAt(alias.location, fmt::format("input_output_alias: parameter number {} is negative", alias.parameter));
    }
    cursor.Expect(",");
    alias.parameter_index = ParseIntegerList(cursor);
    if (cursor.TryConsume(",")) {
      const SourceLocation kind_location = cursor.Location();
      const std::string_view kind = cursor.Name("may-alias or must-alias");
      if (kind != "may-alias" && kind != "must-alias") {
        cursor.FailAt(kind_location, fmt::format("input_output_alias: unknown kind '{}' (may-alias or must-alias)",
                                                 Printable(kind)));
      }
      alias.must_alias = kind == "must-alias";
    }
    cursor.Expect(")");
    aliases.push_back(std::move(alias));
  } while (cursor.TryConsume(","));
  cursor.Expect("}");
  return aliases;
}

}  // namespace systole::hlo::detail
