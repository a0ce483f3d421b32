// Structure of HLO text: module header, computations, instructions, attributes. Names are
// resolved once a computation (operands) or the module (called computations) is complete, so
// forward references work as they do in XLA's own parser.
#include "toolchain/hlo/parser.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <unordered_map>

#include "toolchain/hlo/parser_cursor.hpp"
#include "toolchain/hlo/parser_values.hpp"

namespace systole::hlo {

namespace {

using detail::Cursor;
using detail::Printable;

struct NameReference {
  std::string name;
  SourceLocation location;
};

// What the parser learns about an instruction beyond the IR: names still to resolve.
struct PendingInstruction {
  Instruction* instruction = nullptr;
  std::vector<NameReference> operands;
  std::vector<NameReference> callees;
};

// The attributes of an instruction that calls two computations, for messages.
std::string_view TwoCalleeNames(Opcode opcode) {
  switch (opcode) {
    case Opcode::kWhile: return "condition= and body=";
    case Opcode::kSelectAndScatter: return "select= and scatter=";
    default: return "true_computation= and false_computation=";
  }
}

class ModuleParser {
 public:
  explicit ModuleParser(Cursor& cursor) : cursor_(cursor) {}

  Module Parse() {
    Module module;
    module.name = "module";
    if (cursor_.TryKeyword("HloModule")) {
      module.name = std::string(cursor_.Name("a module name"));
      while (cursor_.TryConsume(",")) {
        const std::string_view attribute = cursor_.Name("a module attribute");
        cursor_.Expect("=");
        if (attribute == "input_output_alias") {
          module.input_output_aliases = ParseInputOutputAlias(cursor_);
        } else {
          cursor_.SkipValue();
        }
      }
      cursor_.TryConsume(":");  // old dumps: `HloModule name:`
    }
    ParseStackFrameTables(module.stack_frames);
    frames_ = &module.stack_frames;
    Computation* marked_entry = nullptr;
    while (!cursor_.AtEnd()) {
      const bool is_entry = cursor_.TryKeyword("ENTRY");
      Computation* computation = ParseComputation(module, is_entry);
      if (is_entry) {
        if (marked_entry != nullptr) {
          cursor_.FailAt(computation->location, fmt::format("second ENTRY computation '{}' (the first is '{}')",
                                                            computation->name, marked_entry->name));
        }
        marked_entry = computation;
      }
    }
    if (module.computations.empty()) cursor_.Fail("a computation");
    module.entry = marked_entry != nullptr ? marked_entry : module.computations.back().get();
    ResolveCallees(module);
    CheckStackFrameReferences(module);
    return module;
  }

 private:
  // FileNames, FunctionNames, FileLocations, StackFrames (XLA prints them in that order, each
  // only when non-empty): `ID "text"` or `ID {key=value …}` entries, IDs 1, 2, 3, … Every
  // reference between tables and from instructions' stack_frame_id is checked.
  void ParseStackFrameTables(StackFrameIndex& index) {
    std::vector<std::string_view> seen;
    for (;;) {
      const Cursor::Mark mark = cursor_.Save();
      const SourceLocation where = cursor_.Location();
      std::string_view table;
      for (std::string_view name : {"FileNames", "FunctionNames", "FileLocations", "StackFrames"}) {
        if (cursor_.TryKeyword(name)) table = name;
        if (!table.empty()) break;
      }
      if (table.empty()) break;
      // A computation may be called FileNames: a table's first entry is a number.
      if (!IsDigit(cursor_.Peek())) {
        cursor_.Restore(mark);
        break;
      }
      if (std::find(seen.begin(), seen.end(), table) != seen.end()) {
        cursor_.FailAt(where, fmt::format("second {} table", table));
      }
      seen.push_back(table);
      std::int64_t expected_id = 1;
      while (IsDigit(cursor_.Peek())) {
        const SourceLocation id_location = cursor_.Location();
        const std::int64_t id = cursor_.Integer("an entry id");
        if (id != expected_id) {
          cursor_.FailAt(id_location, fmt::format("{} entry {} out of order (expected {})", table, id, expected_id));
        }
        ++expected_id;
        if (table == "FileNames") {
          index.file_names.push_back(cursor_.String("a quoted file name"));
        } else if (table == "FunctionNames") {
          index.function_names.push_back(cursor_.String("a quoted function name"));
        } else if (table == "FileLocations") {
          StackFrameIndex::FileLocation l;
          ParseIdFields(table, {{"file_name_id", &l.file_name_id}, {"function_name_id", &l.function_name_id},
                                {"line", &l.line}, {"end_line", &l.end_line}, {"column", &l.column},
                                {"end_column", &l.end_column}});
          file_location_refs_.push_back({id_location, l.file_name_id, l.function_name_id});
          index.file_locations.push_back(l);
        } else {
          StackFrameIndex::Frame f;
          ParseIdFields(table, {{"file_location_id", &f.file_location_id}, {"parent_frame_id", &f.parent_frame_id}});
          frame_refs_.push_back({id_location, f.file_location_id, 0});
          index.frames.push_back(f);
        }
      }
    }
  }

  // `{key=N key=N …}` (spaces or commas between); unknown keys are skipped for newer XLA.
  void ParseIdFields(std::string_view table, std::initializer_list<std::pair<std::string_view, std::int64_t*>> fields) {
    cursor_.Expect("{");
    while (!cursor_.TryConsume("}")) {
      if (cursor_.AtEnd()) cursor_.Fail(fmt::format("'}}' closing a {} entry", table));
      const Cursor::Mark before = cursor_.Save();
      const std::string_view key = cursor_.Name(fmt::format("a {} field name or '}}'", table));
      if (!cursor_.TryConsume("=")) {
        cursor_.Restore(before);
        cursor_.Fail(fmt::format("'}}' closing a {} entry", table));
      }
      std::int64_t* target = nullptr;
      for (const auto& [name, field] : fields) {
        if (name == key) target = field;
      }
      if (target != nullptr) {
        *target = cursor_.Integer(key);
        if (*target < 0) cursor_.Fail(fmt::format("a non-negative {}", key));
      } else {
        cursor_.SkipValue();
      }
      cursor_.TryConsume(",");
    }
  }

  // After the whole module: ids point into their tables.
  void CheckStackFrameReferences(const Module& module) {
    const StackFrameIndex& index = module.stack_frames;
    const auto check = [&](const SourceLocation& where, std::int64_t id, std::size_t size, std::string_view what) {
      if (id < 0 || static_cast<std::size_t>(id) > size) {
        cursor_.FailAt(where, fmt::format("{} {} is not in the table (it has {} entries)", what, id, size));
      }
    };
    for (const auto& r : file_location_refs_) {
      check(r.where, r.first, index.file_names.size(), "file_name_id");
      check(r.where, r.second, index.function_names.size(), "function_name_id");
    }
    for (const auto& r : frame_refs_) check(r.where, r.first, index.file_locations.size(), "file_location_id");
    // A module printed without its tables (XLA can) keeps the instructions' ids with nothing to
    // resolve them: their source is unknown, not an error. With a table, every id must be in it.
    if (index.frames.empty()) return;
    for (const auto& r : stack_frame_refs_) check(r.where, r.first, index.frames.size(), "stack_frame_id");
  }

  // metadata={op_type="…" op_name="…" source_file="…" source_line=N stack_frame_id=N …}
  void ParseMetadata(Instruction& instruction) {
    OpMetadata& m = instruction.metadata;
    cursor_.Expect("{");
    while (!cursor_.TryConsume("}")) {
      if (cursor_.AtEnd()) cursor_.Fail("'}' closing metadata");
      const SourceLocation where = cursor_.Location();
      const std::string_view key = cursor_.Name("a metadata field name or '}'");
      cursor_.Expect("=");
      if (key == "op_name") {
        m.op_name = cursor_.String("a quoted op_name");
      } else if (key == "source_file") {
        m.source_file = cursor_.String("a quoted source_file");
      } else if (key == "source_line") {
        m.source_line = cursor_.Integer("a source_line");
      } else if (key == "stack_frame_id") {
        m.stack_frame_id = cursor_.Integer("a stack_frame_id");
        stack_frame_refs_.push_back({where, m.stack_frame_id, 0});
      } else {
        cursor_.SkipValue();
      }
      cursor_.TryConsume(",");
    }
  }

  static bool IsDigit(char c) { return c >= '0' && c <= '9'; }

  // For the message about an instruction the parser cannot represent (an unsupported op): reads
  // on to its metadata and names the Python line a JAX user wrote; "" when there is none or
  // anything on the way does not parse (the error about the op is the one to report).
  std::string TracedFrom() {
    try {
      Instruction scratch;
      cursor_.Expect("(");
      cursor_.SkipUntilClosing(')');
      cursor_.Expect(")");
      while (cursor_.TryConsume(",")) {
        const std::string_view name = cursor_.Name("an attribute name");
        if (!cursor_.TryConsume("=")) continue;
        if (name == "metadata") {
          ParseMetadata(scratch);
          return SourceLine(*frames_, scratch.metadata);
        }
        cursor_.SkipValue();
      }
    } catch (const HloError&) {
    }
    return "";
  }

  Computation* ParseComputation(Module& module, bool is_entry) {
    auto computation = std::make_unique<Computation>();
    computation->location = cursor_.Location();
    if (is_entry && cursor_.Peek() == '{') {
      computation->name = "entry";
    } else {
      computation->name = std::string(cursor_.Name(is_entry ? "a computation name after ENTRY"
                                                            : "a computation name, ENTRY or end of input"));
    }
    if (module.Find(computation->name) != nullptr) {
      cursor_.FailAt(computation->location, fmt::format("computation '{}' is defined twice", computation->name));
    }
    if (cursor_.TryConsume("(")) ParseSignatureRest();
    cursor_.Expect("{");
    std::vector<PendingInstruction> pending;
    std::unordered_map<std::string_view, Instruction*> by_name;
    while (!cursor_.TryConsume("}")) {
      if (cursor_.AtEnd()) cursor_.Fail(fmt::format("'}}' closing computation '{}'", computation->name));
      const bool is_root = cursor_.TryKeyword("ROOT");
      PendingInstruction parsed = ParseInstruction(*computation);
      if (!by_name.emplace(parsed.instruction->name, parsed.instruction).second) {
        cursor_.FailAt(parsed.instruction->location,
                       fmt::format("instruction '{}' is defined twice in computation '{}'",
                                   parsed.instruction->name, computation->name));
      }
      if (is_root) {
        if (computation->root != nullptr) {
          cursor_.FailAt(parsed.instruction->location,
                         fmt::format("second ROOT '{}' in computation '{}' (the first is '{}')",
                                     parsed.instruction->name, computation->name, computation->root->name));
        }
        computation->root = parsed.instruction;
      }
      pending.push_back(std::move(parsed));
    }
    if (computation->instructions.empty()) {
      cursor_.FailAt(computation->location, fmt::format("computation '{}' has no instructions", computation->name));
    }
    if (computation->root == nullptr) computation->root = computation->instructions.back().get();
    for (PendingInstruction& p : pending) {
      for (const NameReference& operand : p.operands) {
        const auto found = by_name.find(operand.name);
        if (found == by_name.end()) {
          cursor_.FailAt(operand.location, fmt::format("unknown operand '{}' of instruction '{}'", operand.name,
                                                       p.instruction->name));
        }
        p.instruction->operands.push_back(found->second);
      }
      if (!p.callees.empty()) pending_calls_.push_back({p.instruction, std::move(p.callees)});
    }
    module.computations.push_back(std::move(computation));
    return module.computations.back().get();
  }

  // `(a: f32[2], b: (f32[], s32[])) -> f32[2]` after the '('. The parameter instructions carry
  // the same information, so the signature is checked for syntax only.
  void ParseSignatureRest() {
    if (!cursor_.TryConsume(")")) {
      do {
        cursor_.Name("a parameter name");
        cursor_.Expect(":");
        detail::ParseShape(cursor_);
      } while (cursor_.TryConsume(","));
      cursor_.Expect(")");
    }
    cursor_.Expect("->");
    detail::ParseShape(cursor_);
  }

  PendingInstruction ParseInstruction(Computation& computation) {
    PendingInstruction pending;
    auto owned = std::make_unique<Instruction>();
    Instruction& instruction = *owned;
    pending.instruction = owned.get();
    computation.instructions.push_back(std::move(owned));

    instruction.location = cursor_.Location();
    instruction.name = std::string(cursor_.Name("an instruction name, ROOT or '}'"));
    cursor_.Expect("=");
    instruction.shape = detail::ParseShape(cursor_);
    const SourceLocation opcode_location = cursor_.Location();
    const std::string_view opcode_name = cursor_.Name("an opcode");
    const std::optional<Opcode> opcode = OpcodeFromName(opcode_name);
    if (!opcode) {
      const std::string traced = TracedFrom();
      cursor_.FailAt(opcode_location, fmt::format("unsupported op '{}' in instruction '{}'{}", Printable(opcode_name),
                                                  instruction.name,
                                                  traced.empty() ? "" : fmt::format(" (traced at {})", traced)));
    }
    instruction.opcode = *opcode;
    cursor_.Expect("(");
    if (instruction.opcode == Opcode::kParameter) {
      instruction.parameter_number = cursor_.Integer("a parameter number");
      if (instruction.parameter_number < 0) cursor_.Fail("a non-negative parameter number");
      cursor_.Expect(")");
    } else if (instruction.opcode == Opcode::kConstant) {
      instruction.literal = detail::ParseLiteral(cursor_, instruction.shape, instruction.literal_elided);
      cursor_.Expect(")");
    } else if (!cursor_.TryConsume(")")) {
      do {
        if (detail::AtShape(cursor_)) detail::ParseShape(cursor_);  // `add(f32[4] %a, …)`
        const SourceLocation where = cursor_.Location();
        pending.operands.push_back({std::string(cursor_.Name("an operand name")), where});
      } while (cursor_.TryConsume(","));
      cursor_.Expect(")");
    }
    while (cursor_.TryConsume(",")) ParseAttribute(instruction, pending);
    return pending;
  }

  void ParseAttribute(Instruction& instruction, PendingInstruction& pending) {
    const std::string_view name = cursor_.Name("an attribute name");
    if (!cursor_.TryConsume("=")) return;  // a bare flag: nothing the front end needs
    if (name == "dimensions") {
      instruction.dimensions = detail::ParseIntegerList(cursor_);
    } else if (name == "dynamic_slice_sizes") {
      instruction.dynamic_slice_sizes = detail::ParseIntegerList(cursor_);
    } else if (name == "lhs_batch_dims") {
      instruction.dot_dims.lhs_batch = detail::ParseIntegerList(cursor_);
    } else if (name == "rhs_batch_dims") {
      instruction.dot_dims.rhs_batch = detail::ParseIntegerList(cursor_);
    } else if (name == "lhs_contracting_dims") {
      instruction.dot_dims.lhs_contracting = detail::ParseIntegerList(cursor_);
    } else if (name == "rhs_contracting_dims") {
      instruction.dot_dims.rhs_contracting = detail::ParseIntegerList(cursor_);
    } else if (name == "to_apply" || name == "calls" || name == "branch_computations") {
      ParseCallees(pending);
    } else if (name == "condition" || name == "true_computation" || name == "select") {
      ParseCalleeAt(pending, 0);  // while: {condition, body}; conditional: {true, false}; {select, scatter}
    } else if (name == "body" || name == "false_computation" || name == "scatter") {
      ParseCalleeAt(pending, 1);
    } else if (name == "window") {
      instruction.window = detail::ParseWindow(cursor_);
    } else if (name == "dim_labels") {
      instruction.conv_dims = detail::ParseDimLabels(cursor_);
    } else if (name == "slice") {
      instruction.slice = detail::ParseSlice(cursor_);
    } else if (name == "padding") {
      instruction.padding = detail::ParsePadding(cursor_);
    } else if (name == "direction" || name == "comparison_direction") {
      instruction.comparison = detail::ParseComparisonDirection(cursor_);
    } else if (name == "index") {
      instruction.tuple_index = cursor_.Integer("a tuple index");
    } else if (name == "iota_dimension") {
      instruction.iota_dimension = cursor_.Integer("an iota dimension");
    } else if (name == "feature_group_count") {
      instruction.feature_group_count = cursor_.Integer("a feature group count");
    } else if (name == "batch_group_count") {
      instruction.batch_group_count = cursor_.Integer("a batch group count");
    } else if (name == "exponent_bits") {
      instruction.exponent_bits = cursor_.Integer("a number of exponent bits");
    } else if (name == "mantissa_bits") {
      instruction.mantissa_bits = cursor_.Integer("a number of mantissa bits");
    } else if (name == "offset_dims" || name == "update_window_dims") {
      instruction.gather_dims.offset_dims = detail::ParseIntegerList(cursor_);
    } else if (name == "collapsed_slice_dims" || name == "inserted_window_dims") {
      instruction.gather_dims.collapsed_slice_dims = detail::ParseIntegerList(cursor_);
    } else if (name == "start_index_map" || name == "scatter_dims_to_operand_dims") {
      instruction.gather_dims.start_index_map = detail::ParseIntegerList(cursor_);
    } else if (name == "operand_batching_dims" || name == "input_batching_dims") {
      instruction.gather_dims.operand_batching_dims = detail::ParseIntegerList(cursor_);
    } else if (name == "start_indices_batching_dims" || name == "scatter_indices_batching_dims") {
      instruction.gather_dims.start_indices_batching_dims = detail::ParseIntegerList(cursor_);
    } else if (name == "index_vector_dim") {
      instruction.gather_dims.index_vector_dim = cursor_.Integer("an index vector dimension");
    } else if (name == "slice_sizes") {
      instruction.gather_dims.slice_sizes = detail::ParseIntegerList(cursor_);
    } else if (name == "epsilon") {
      instruction.epsilon = cursor_.Number("an epsilon");
    } else if (name == "feature_index") {
      instruction.feature_index = cursor_.Integer("a feature index");
    } else if (name == "is_stable") {
      instruction.is_stable = ParseBool();
    } else if (name == "type" && instruction.opcode == Opcode::kCompare) {
      const SourceLocation where = cursor_.Location();
      const std::string_view type = cursor_.Name("a comparison type");
      if (type == "TOTALORDER") {
        instruction.total_order = true;
      } else if (type != "FLOAT" && type != "SIGNED" && type != "UNSIGNED" && type != "PARTIALORDER") {
        cursor_.FailAt(where, fmt::format("unknown comparison type '{}' (FLOAT, TOTALORDER, SIGNED, UNSIGNED)",
                                          Printable(type)));
      }
    } else if (name == "metadata") {
      ParseMetadata(instruction);
    } else {
      cursor_.SkipValue();  // metadata, backend_config, sharding, frontend_attributes, …
    }
  }

  bool ParseBool() {
    const SourceLocation where = cursor_.Location();
    const std::string_view value = cursor_.Name("true or false");
    if (value != "true" && value != "false") cursor_.FailAt(where, fmt::format("expected true or false, found '{}'", Printable(value)));
    return value == "true";
  }

  void ParseCallees(PendingInstruction& pending) {
    const bool braced = cursor_.TryConsume("{");
    do {
      const SourceLocation where = cursor_.Location();
      pending.callees.push_back({std::string(cursor_.Name("a computation name")), where});
    } while (braced && cursor_.TryConsume(","));
    if (braced) cursor_.Expect("}");
  }

  void ParseCalleeAt(PendingInstruction& pending, std::size_t slot) {
    const SourceLocation where = cursor_.Location();
    NameReference callee{std::string(cursor_.Name("a computation name")), where};
    if (pending.callees.size() <= slot) pending.callees.resize(slot + 1);
    pending.callees[slot] = std::move(callee);
  }

  void ResolveCallees(Module& module) {
    for (const auto& [instruction, callees] : pending_calls_) {
      for (const NameReference& callee : callees) {
        if (callee.name.empty()) {  // a slot ParseCalleeAt skipped: `body=` without `condition=`
          cursor_.FailAt(instruction->location,
                         fmt::format("instruction '{}' names only one of its two computations ({})", instruction->name,
                                     TwoCalleeNames(instruction->opcode)));
        }
        Computation* computation = module.Find(callee.name);
        if (computation == nullptr) {
          cursor_.FailAt(callee.location, fmt::format("unknown computation '{}' called by instruction '{}'",
                                                      callee.name, instruction->name));
        }
        instruction->called.push_back(computation);
      }
    }
  }

  struct IdReference {
    SourceLocation where;
    std::int64_t first, second;
  };

  Cursor& cursor_;
  const StackFrameIndex* frames_ = nullptr;  // the module's tables, once read
  std::vector<std::pair<Instruction*, std::vector<NameReference>>> pending_calls_;
  std::vector<IdReference> file_location_refs_;  // file_name_id, function_name_id
  std::vector<IdReference> frame_refs_;          // file_location_id
  std::vector<IdReference> stack_frame_refs_;    // instructions' stack_frame_id
};

// Splits text at lines that start with `// -----`; each piece keeps its first line number.
struct TextPiece {
  std::string_view text;
  std::uint32_t first_line;
};

std::vector<TextPiece> SplitModules(std::string_view text) {
  std::vector<TextPiece> pieces;
  std::size_t piece_start = 0;
  std::uint32_t piece_line = 1;
  std::size_t line_start = 0;
  std::uint32_t line = 1;
  while (line_start <= text.size()) {
    std::size_t line_end = text.find('\n', line_start);
    if (line_end == std::string_view::npos) line_end = text.size();
    std::string_view content = text.substr(line_start, line_end - line_start);
    while (!content.empty() && (content.front() == ' ' || content.front() == '\t')) content.remove_prefix(1);
    if (content.starts_with("// -----")) {
      pieces.push_back({text.substr(piece_start, line_start - piece_start), piece_line});
      piece_start = line_end;  // the separator line's newline belongs to the next piece
      piece_line = line;
    }
    if (line_end == text.size()) break;
    line_start = line_end + 1;
    ++line;
  }
  pieces.push_back({text.substr(piece_start), piece_line});
  return pieces;
}

// The NAME of `HloModule NAME, …` in a module's text, or "" when the header is missing.
std::string_view ModuleNameOf(std::string_view text) {
  std::size_t at = 0;
  while ((at = text.find("HloModule", at)) != std::string_view::npos) {
    const bool line_start = at == 0 || text[at - 1] == '\n' || text[at - 1] == ' ' || text[at - 1] == '\t';
    at += std::string_view("HloModule").size();
    if (!line_start || at >= text.size() || (text[at] != ' ' && text[at] != '\t')) continue;
    while (at < text.size() && (text[at] == ' ' || text[at] == '\t')) ++at;
    std::size_t end = at;
    while (end < text.size() && text[end] != ',' && text[end] != ' ' && text[end] != '\n' && text[end] != '\r') ++end;
    return text.substr(at, end - at);
  }
  return {};
}

}  // namespace

std::string SelectModuleText(std::string_view text, std::string_view file_name, std::string_view selector) {
  std::vector<TextPiece> modules;
  for (const TextPiece& piece : SplitModules(text)) {
    Cursor cursor(piece.text, std::string(file_name), piece.first_line);
    if (!cursor.AtEnd()) modules.push_back(piece);  // pieces of only comments are no module
  }
  const bool is_index = !selector.empty() && selector.size() < 10 &&
                        std::all_of(selector.begin(), selector.end(), [](char c) { return c >= '0' && c <= '9'; });
  const TextPiece* chosen = nullptr;
  if (is_index) {
    const std::size_t index = std::stoul(std::string(selector));
    if (index < modules.size()) chosen = &modules[index];
  } else {
    for (const TextPiece& piece : modules) {
      if (ModuleNameOf(piece.text) == selector) chosen = chosen == nullptr ? &piece : chosen;
    }
  }
  if (chosen == nullptr) {
    std::string listed;
    for (std::size_t k = 0; k < modules.size(); ++k) {
      const std::string_view name = ModuleNameOf(modules[k].text);
      listed += fmt::format("{}{} {} (line {})", k == 0 ? "" : ", ", k, name.empty() ? "(no name)" : name,
                            modules[k].first_line);
    }
    throw HloError(SourceLocation{std::string(file_name), 0, 0},
                   fmt::format("no module {} '{}': the file holds {} module(s): {}", is_index ? "numbered" : "named",
                               Printable(selector), modules.size(), listed));
  }
  return std::string(chosen->first_line - 1, '\n') + std::string(chosen->text);
}

std::vector<Module> ParseModules(std::string_view text, std::string_view file_name) {
  std::vector<Module> modules;
  for (const TextPiece& piece : SplitModules(text)) {
    Cursor cursor(piece.text, std::string(file_name), piece.first_line);
    if (cursor.AtEnd()) continue;  // only comments between separators
    modules.push_back(ModuleParser(cursor).Parse());
  }
  if (modules.empty()) {
    throw HloError(SourceLocation{std::string(file_name), 1, 1}, "expected an HLO module, found end of input");
  }
  return modules;
}

Module ParseModule(std::string_view text, std::string_view file_name) {
  std::vector<Module> modules = ParseModules(text, file_name);
  if (modules.size() != 1) {
    throw HloError(SourceLocation{std::string(file_name), 0, 0},
                   fmt::format("expected one HLO module, found {} (separated by '// -----'): choose one with "
                               "--module NAME|INDEX",
                               modules.size()));
  }
  return std::move(modules.front());
}

std::vector<Module> ParseModuleFile(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw HloError(fmt::format("cannot open {}", path.string()));
  std::ostringstream text;
  text << file.rdbuf();
  return ParseModules(text.str(), path.string());
}

}  // namespace systole::hlo
