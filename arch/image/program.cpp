#include "arch/image/program.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <set>

#include "arch/config/config.hpp"

namespace systole::image {
namespace {

struct DataTypeInfo {
  DataType dtype;
  std::string_view name;
  unsigned bytes;
};
constexpr std::array<DataTypeInfo, 4> kDataTypes = {{
    {DataType::kInt8, "int8", 1},
    {DataType::kInt32, "int32", 4},
    {DataType::kBf16, "bf16", 2},
    {DataType::kFp32, "fp32", 4},
}};

// A half-open byte range [begin, end) of device memory, named for messages.
struct Extent {
  std::uint64_t begin, end;
  std::string what;
  std::string subject;
};

}  // namespace

std::string_view DataTypeName(DataType dtype) {
  return kDataTypes[static_cast<unsigned>(dtype) % kDataTypes.size()].name;
}

std::optional<DataType> DataTypeFromName(std::string_view name) {
  for (const DataTypeInfo& info : kDataTypes) {
    if (info.name == name) return info.dtype;
  }
  return std::nullopt;
}

unsigned DataTypeBytes(DataType dtype) {
  return kDataTypes[static_cast<unsigned>(dtype) % kDataTypes.size()].bytes;
}

std::string_view DataTypeNames() { return "int8, int32, bf16, fp32"; }

std::uint64_t TensorDesc::Elements() const {
  std::uint64_t n = 1;
  for (std::uint64_t d : shape) {
    if (d != 0 && n > ~std::uint64_t{0} / d) return ~std::uint64_t{0};  // saturate on overflow
    n *= d;
  }
  return n;
}

std::uint64_t TensorDesc::Bytes() const {
  const std::uint64_t n = Elements(), size = DataTypeBytes(dtype);
  return n > ~std::uint64_t{0} / size ? ~std::uint64_t{0} : n * size;
}

std::string Program::SourceOf(std::size_t index) const {
  if (index >= source_map.size() || source_map[index].line == 0) return {};
  return fmt::format("{}:{}", source_map[index].file, source_map[index].line);
}

const DataSegment* Program::FindData(std::string_view name) const {
  auto it = std::find_if(data.begin(), data.end(), [&](const auto& d) { return d.name == name; });
  return it == data.end() ? nullptr : &*it;
}

const TensorDesc* Program::FindInput(std::string_view name) const {
  auto it =
      std::find_if(inputs.begin(), inputs.end(), [&](const auto& t) { return t.name == name; });
  return it == inputs.end() ? nullptr : &*it;
}

const TensorDesc* Program::FindOutput(std::string_view name) const {
  auto it =
      std::find_if(outputs.begin(), outputs.end(), [&](const auto& t) { return t.name == name; });
  return it == outputs.end() ? nullptr : &*it;
}

bool Program::operator==(const Program& other) const {
  return config == other.config && text_address == other.text_address && words == other.words &&
         data == other.data && inputs == other.inputs && outputs == other.outputs;
}

bool IsValidName(std::string_view name) {
  if (name.empty() || name.size() > 128) return false;
  const auto alpha = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  };
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if (!alpha(name[0])) return false;
  // Words the assembler reads specially where a value is expected.
  if (name == "bits" || name == "wait" || name == "signal") return false;
  return std::all_of(name.begin(), name.end(), [&](char c) { return alpha(c) || digit(c); });
}

std::vector<ProgramProblem> ValidateProgram(const Program& program) {
  std::vector<ProgramProblem> problems;
  const auto problem = [&](std::string_view subject, std::string message) {
    problems.push_back({std::string(subject), std::move(message)});
  };
  if (program.text_address % isa::kInstructionBytes != 0) {
    problem("", fmt::format("the program text at 0x{:x} is not on a {}-byte boundary",
                            program.text_address, isa::kInstructionBytes));
  }
  std::set<std::string, std::less<>> names;
  std::vector<Extent> extents;  // initialised memory: text and data
  const auto add_extent = [&](std::uint64_t begin, std::uint64_t size, std::string what,
                              std::string_view subject) {
    if (size > ~std::uint64_t{0} - begin) {
      problem(subject,
              fmt::format("{} at 0x{:x} runs past the end of the address space", what, begin));
    } else if (size != 0) {
      extents.push_back({begin, begin + size, std::move(what), std::string(subject)});
    }
  };
  const auto check_name = [&](std::string_view name, std::string_view kind) {
    if (!IsValidName(name)) {
      problem(name,
              fmt::format("{} name '{}' is not a valid name ([A-Za-z_][A-Za-z0-9_]*)", kind, name));
    } else if (!names.insert(std::string(name)).second) {
      problem(name, fmt::format("name '{}' is used twice", name));
    }
  };

  // A name, never a path: tools look the configuration up by it (LoadConfig).
  if (program.config && !IsConfigName(*program.config)) {
    problem("", fmt::format("config {:?} is not a configuration name (up to 16 of A-Z a-z 0-9 - _)", *program.config));
  }
  if (program.words.size() > ~std::uint64_t{0} / isa::kInstructionBytes) {
    problem("", "too many instructions");
  } else {
    add_extent(program.text_address, program.TextBytes(), "the program text", "");
  }
  if (!program.source_map.empty() && program.source_map.size() != program.words.size()) {
    problem("", fmt::format("source map has {} entries for {} instructions",
                            program.source_map.size(), program.words.size()));
  }
  for (const DataSegment& segment : program.data) {
    check_name(segment.name, "data");
    if (segment.bytes.empty()) {
      problem(segment.name, fmt::format("data '{}' is empty", segment.name));
    } else if (segment.bytes.size() % DataTypeBytes(segment.dtype) != 0) {
      problem(segment.name,
              fmt::format("data '{}' holds {} bytes, not a whole number of {} elements",
                          segment.name, segment.bytes.size(), DataTypeName(segment.dtype)));
    }
    add_extent(segment.address, segment.bytes.size(), fmt::format("data '{}'", segment.name),
               segment.name);
  }
  for (const auto* list : {&program.inputs, &program.outputs}) {
    const std::string_view kind = list == &program.inputs ? "input" : "output";
    for (const TensorDesc& tensor : *list) {
      check_name(tensor.name, kind);
      if (tensor.shape.empty() ||
          std::find(tensor.shape.begin(), tensor.shape.end(), 0u) != tensor.shape.end()) {
        problem(tensor.name, fmt::format("{} '{}' has an empty shape", kind, tensor.name));
      } else if (tensor.Bytes() == ~std::uint64_t{0} ||
                 tensor.Bytes() > ~std::uint64_t{0} - tensor.address) {
        problem(tensor.name,
                fmt::format("{} '{}' runs past the end of the address space", kind, tensor.name));
      }
    }
  }
  // Initialised regions must not overlap: the order a loader writes them would decide the bytes.
  std::sort(extents.begin(), extents.end(), [](const Extent& a, const Extent& b) {
    return a.begin < b.begin || (a.begin == b.begin && a.end < b.end);
  });
  std::size_t widest = 0;  // among extents[0..i), the one reaching furthest
  for (std::size_t i = 1; i < extents.size(); ++i) {
    const Extent& prev = extents[widest];
    if (extents[i].begin < prev.end) {
      problem(extents[i].subject.empty() ? prev.subject : extents[i].subject,
              fmt::format("{} [0x{:x}, 0x{:x}) overlaps {} [0x{:x}, 0x{:x})", extents[i].what,
                          extents[i].begin, extents[i].end, prev.what, prev.begin, prev.end));
    }
    if (extents[i].end > prev.end) widest = i;
  }
  return problems;
}

}  // namespace systole::image
