#include "toolchain/compiler/model_file.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>
#include <zip.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "toolchain/archive/zip_reader.hpp"
#include "toolchain/asm/bundle.hpp"
#include "toolchain/compiler/lowering.hpp"

namespace systole::compiler {
namespace {

using nlohmann::json;

constexpr archive::Limits kModelLimits{.max_member_bytes = std::uint64_t{4} << 30};
constexpr time_t kEntryTime = 315532800;  // fixed (1980-01-01): the same model, the same bytes

struct ZipCloser {
  void operator()(zip_t* archive) const { zip_discard(archive); }
};
using ZipPtr = std::unique_ptr<zip_t, ZipCloser>;

const char* KindName(Binding::Kind kind) {
  switch (kind) {
    case Binding::Kind::kValue: return "value";
    case Binding::Kind::kWeights: return "weights";
    case Binding::Kind::kBias: return "bias";
    case Binding::Kind::kState: return "state";
  }
  return "value";
}

json BindingJson(const Binding& b) {
  json j = {{"kind", KindName(b.kind)}, {"value", b.value}, {"permutation", b.permutation},
            {"dtype", image::DataTypeName(b.dtype)}, {"shape", b.shape}};
  if (b.block_columns != 0) {
    j["block_columns"] = b.block_columns;
    j["block_outer"] = b.block_outer;
  }
  return j;
}

class ModelReader {
 public:
  explicit ModelReader(const std::filesystem::path& path) : archive_(Open(path)), origin_(path.string()) {}

  json Manifest() {
    const std::string text = Entry("manifest.json");
    json manifest = json::parse(text, nullptr, false);
    if (manifest.is_discarded() || !manifest.is_object()) Fail("manifest.json is not a JSON object");
    return manifest;
  }

  // Verified (CRC, sizes, ratio) by archive::ZipReader: a changed digit in model.hlo's
  // constants must fail here, not run and give other numbers.
  std::string Entry(const std::string& name) {
    try {
      const std::vector<std::uint8_t> bytes = archive_.Read(name);
      return std::string(bytes.begin(), bytes.end());
    } catch (const archive::ZipError& error) {
      throw std::runtime_error(error.what());
    }
  }

  const std::string& origin() const { return origin_; }

  [[noreturn]] void Fail(const std::string& message) const {
    throw std::runtime_error(fmt::format("{}: {}", origin_, message));
  }

 private:
  static archive::ZipReader Open(const std::filesystem::path& path) {
    try {
      return archive::ZipReader::OpenFile(path, "compiled model", kModelLimits);
    } catch (const archive::ZipError& error) {
      throw std::runtime_error(error.what());
    }
  }

  archive::ZipReader archive_;
  std::string origin_;
};

template <typename T>
T Get(const json& object, const char* key, const ModelReader& reader, const std::string& where) {
  if (!object.is_object() || !object.contains(key)) reader.Fail(fmt::format("manifest: {}{} is missing", where, key));
  try {
    return object.at(key).get<T>();
  } catch (const json::exception&) {
    reader.Fail(fmt::format("manifest: {}{} has the wrong type", where, key));
  }
}

Binding ReadBinding(const json& j, const ModelReader& reader, const std::string& where) {
  Binding b;
  const std::string kind = Get<std::string>(j, "kind", reader, where);
  if (kind == "value") b.kind = Binding::Kind::kValue;
  else if (kind == "weights") b.kind = Binding::Kind::kWeights;
  else if (kind == "bias") b.kind = Binding::Kind::kBias;
  else reader.Fail(fmt::format("manifest: {}kind '{}' is not value, weights or bias", where, kind));
  b.value = Get<std::string>(j, "value", reader, where);
  b.permutation = Get<std::vector<std::int64_t>>(j, "permutation", reader, where);
  const auto dtype = image::DataTypeFromName(Get<std::string>(j, "dtype", reader, where));
  if (!dtype) reader.Fail(fmt::format("manifest: {}dtype is not one of {}", where, image::DataTypeNames()));
  b.dtype = *dtype;
  b.shape = Get<std::vector<std::uint64_t>>(j, "shape", reader, where);
  if (j.contains("block_columns")) {  // optional: absent means not blocked
    b.block_columns = Get<std::uint64_t>(j, "block_columns", reader, where);
    b.block_outer = Get<std::size_t>(j, "block_outer", reader, where);
  }
  return b;
}

// A binding must name a value of the module, permute all of its dimensions and describe the
// program tensor it feeds.
void CheckBinding(const Binding& b, const image::TensorDesc& tensor, const hlo::Computation& entry,
                  const ModelReader& reader, const std::string& where) {
  if (b.dtype != tensor.dtype || b.shape != tensor.shape) {
    reader.Fail(fmt::format("manifest: {} does not match the program's tensor '{}'", where, tensor.name));
  }
  if (b.kind == Binding::Kind::kBias) return;
  const hlo::Instruction* value = entry.Find(b.value);
  if (value == nullptr) reader.Fail(fmt::format("manifest: {} names '{}', which the module does not have", where, b.value));
  std::vector<bool> seen(value->shape.Rank(), false);
  for (std::int64_t p : b.permutation) {
    if (p < 0 || static_cast<std::size_t>(p) >= seen.size() || seen[static_cast<std::size_t>(p)]) {
      reader.Fail(fmt::format("manifest: {}: permutation [{}] does not fit {}", where, fmt::join(b.permutation, ","),
                              value->shape.ToString()));
    }
    seen[static_cast<std::size_t>(p)] = true;
  }
  std::uint64_t elements = static_cast<std::uint64_t>(value->shape.Elements());
  if (b.block_columns != 0 && b.permutation.size() == seen.size() && b.block_outer < seen.size() && !seen.empty()) {
    // Blocked: the last transposed dimension N is padded up to whole blocks.
    const auto n = static_cast<std::uint64_t>(value->shape.dims[static_cast<std::size_t>(b.permutation.back())]);
    elements = n == 0 ? 0 : elements / n * ((n + b.block_columns - 1) / b.block_columns) * b.block_columns;
  } else if (b.block_columns != 0) {
    reader.Fail(fmt::format("manifest: {}: block_outer {} does not fit {}", where, b.block_outer, value->shape.ToString()));
  }
  if (b.permutation.size() != seen.size() || elements != tensor.Elements()) {
    reader.Fail(fmt::format("manifest: {}: {} does not fit the device tensor", where, value->shape.ToString()));
  }
}

// A member that deflates beyond the reader's ratio bound (HLO text with a large constant of
// zeros) is rewritten stored, so that LoadModel reads every model SaveModel writes.
void StoreWhatTheReaderWouldRefuse(const std::filesystem::path& temporary, const std::filesystem::path& path) {
  const std::vector<std::string> names = archive::MembersBeyondRatio(temporary, kModelLimits);
  if (names.empty()) return;
  int error = 0;
  ZipPtr archive(zip_open(temporary.string().c_str(), 0, &error));
  if (!archive) throw std::runtime_error(fmt::format("{}: cannot reopen to store members", path.string()));
  for (const std::string& name : names) {
    const zip_int64_t index = zip_name_locate(archive.get(), name.c_str(), 0);
    if (index >= 0) zip_set_file_compression(archive.get(), static_cast<zip_uint64_t>(index), ZIP_CM_STORE, 0);
  }
  if (zip_close(archive.get()) != 0) {
    throw std::runtime_error(fmt::format("{}: cannot write: {}", path.string(), zip_strerror(archive.get())));
  }
  archive.release();
}

// The manifest's steps; device programs are numbered in PlacementRows' order (a control
// step's regions right after it) and appended to `bundles`.
json StepsJson(const std::vector<Step>& steps, std::vector<std::vector<std::uint8_t>>& bundles) {
  json list = json::array();
  for (const Step& step : steps) {
    if (step.kind == Step::Kind::kHost) {
      list.push_back({{"kind", "host"}, {"instruction", step.instruction}, {"reason", step.reason}});
      continue;
    }
    if (step.kind == Step::Kind::kControl) {
      json regions = json::array();
      for (const Region& region : step.regions) {
        regions.push_back({{"computation", region.computation}, {"role", region.role},
                           {"steps", StepsJson(region.steps, bundles)}});
      }
      list.push_back({{"kind", "control"}, {"instruction", step.instruction}, {"regions", regions}});
      continue;
    }
    const DeviceStep& d = *step.device;
    json inputs = json::array();
    for (const Binding& b : d.inputs) inputs.push_back(BindingJson(b));
    json epilogue = json::array();
    for (const EpilogueTerm& t : d.epilogue) {
      epilogue.push_back({{"op", t.op == EpilogueTerm::Op::kAdd ? "add" : "multiply"}, {"operand", t.operand}});
    }
    list.push_back({{"kind", "device"}, {"program", fmt::format("steps/{}.sbin", bundles.size())},
                    {"kernel", d.kernel}, {"covers", d.covers}, {"inputs", inputs},
                    {"output", BindingJson(d.output)}, {"epilogue", epilogue},
                    {"estimate", {{"cycles", d.estimate.cycles}, {"mxu_busy", d.estimate.mxu_busy}, {"macs", d.estimate.macs}}}});
    bundles.push_back(assembly::SerializeBundle(d.program));
  }
  return list;
}

// A device step; its bindings and epilogue must name values of `computation`.
Step ReadDeviceStep(const json& j, const hlo::Computation& computation, ModelReader& reader, const std::string& where) {
  auto d = std::make_shared<DeviceStep>();
  const std::string program_name = Get<std::string>(j, "program", reader, where);
  const std::string bytes = reader.Entry(program_name);
  d->program = assembly::ParseBundle(std::span(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()),
                                     fmt::format("{}:{}", reader.origin(), program_name));
  d->kernel = Get<std::string>(j, "kernel", reader, where);
  d->covers = Get<std::vector<std::string>>(j, "covers", reader, where);
  const json inputs = Get<json>(j, "inputs", reader, where);
  if (!inputs.is_array() || inputs.size() != d->program.inputs.size() || d->program.outputs.size() != 1) {
    reader.Fail(fmt::format("manifest: {}inputs do not match {}", where, program_name));
  }
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    d->inputs.push_back(ReadBinding(inputs[i], reader, fmt::format("{}inputs[{}].", where, i)));
    CheckBinding(d->inputs.back(), d->program.inputs[i], computation, reader, fmt::format("{}inputs[{}]", where, i));
  }
  d->output = ReadBinding(Get<json>(j, "output", reader, where), reader, where + "output.");
  CheckBinding(d->output, d->program.outputs[0], computation, reader, where + "output");
  for (const json& t : Get<json>(j, "epilogue", reader, where)) {
    EpilogueTerm term;
    term.op = Get<std::string>(t, "op", reader, where) == "add" ? EpilogueTerm::Op::kAdd : EpilogueTerm::Op::kMultiply;
    term.operand = Get<std::string>(t, "operand", reader, where);
    if (computation.Find(term.operand) == nullptr) reader.Fail(fmt::format("manifest: {}epilogue names an unknown value", where));
    d->epilogue.push_back(term);
  }
  const json estimate = Get<json>(j, "estimate", reader, where);
  d->estimate = {Get<std::uint64_t>(estimate, "cycles", reader, where), Get<std::uint64_t>(estimate, "mxu_busy", reader, where),
                 Get<std::uint64_t>(estimate, "macs", reader, where)};
  return {Step::Kind::kDevice, d->output.value, "", std::move(d)};
}

std::vector<Region> ReadRegions(const json& j, const hlo::Module& module, const hlo::Instruction& control,
                                ModelReader& reader, const std::string& where);

// The steps of `computation` from the manifest's `steps` (`where_steps` names them in errors);
// a control step's regions must be the computations its instruction calls, in order, so the
// nesting is the module's and ends.
std::vector<Step> ReadSteps(const json& steps, const hlo::Module& module, const hlo::Computation& computation,
                            ModelReader& reader, const std::string& where_steps) {
  if (!steps.is_array()) reader.Fail(fmt::format("manifest: {}steps must be an array", where_steps));
  std::vector<Step> read;
  for (std::size_t s = 0; s < steps.size(); ++s) {
    const std::string where = fmt::format("{}steps[{}].", where_steps, s);
    const json& j = steps[s];
    const std::string kind = Get<std::string>(j, "kind", reader, where);
    if (kind == "host" || kind == "control") {
      Step step{kind == "host" ? Step::Kind::kHost : Step::Kind::kControl,
                Get<std::string>(j, "instruction", reader, where),
                kind == "host" ? Get<std::string>(j, "reason", reader, where) : "", nullptr};
      const hlo::Instruction* instruction = computation.Find(step.instruction);
      if (instruction == nullptr) {
        reader.Fail(fmt::format("manifest: {}instruction '{}' is not in {}", where, step.instruction, computation.name));
      }
      if (kind == "control") step.regions = ReadRegions(j, module, *instruction, reader, where);
      read.push_back(std::move(step));
      continue;
    }
    if (kind != "device") reader.Fail(fmt::format("manifest: {}kind must be host, device or control", where));
    read.push_back(ReadDeviceStep(j, computation, reader, where));
  }
  return read;
}

std::vector<Region> ReadRegions(const json& j, const hlo::Module& module, const hlo::Instruction& control,
                                ModelReader& reader, const std::string& where) {
  const json regions = Get<json>(j, "regions", reader, where);
  const bool calls = control.opcode == hlo::Opcode::kWhile || control.opcode == hlo::Opcode::kConditional;
  if (!calls || !regions.is_array() || regions.size() != control.called.size()) {
    reader.Fail(fmt::format("manifest: {}regions do not match the computations '{}' calls", where, control.name));
  }
  std::vector<Region> read;
  for (std::size_t r = 0; r < regions.size(); ++r) {
    const std::string at = fmt::format("{}regions[{}].", where, r);
    Region region{Get<std::string>(regions[r], "computation", reader, at), Get<std::string>(regions[r], "role", reader, at),
                  {}};
    if (region.computation != control.called[r]->name) {
      reader.Fail(fmt::format("manifest: {}computation '{}' is not the one '{}' calls there ('{}')", at,
                              region.computation, control.name, control.called[r]->name));
    }
    region.steps = ReadSteps(Get<json>(regions[r], "steps", reader, at), module, *control.called[r], reader, at);
    read.push_back(std::move(region));
  }
  return read;
}

}  // namespace

void SaveModel(const CompiledModel& model, const std::filesystem::path& path) {
  if (!model.state_tensors.empty()) {
    throw std::runtime_error(fmt::format("{}: a model that keeps training state in device memory is not stored in "
                                         "model files (compile it without device state to save it)", model.source_name));
  }
  json manifest = {{"format", kModelFormat}, {"version", kModelVersion}, {"config", model.config},
                   {"source", model.source_name}, {"hlo", "model.hlo"}};
  std::vector<std::vector<std::uint8_t>> bundles;  // must outlive zip_close
  const json steps = StepsJson(model.steps, bundles);
  manifest["steps"] = steps;
  const std::string manifest_text = manifest.dump(1) + "\n";

  std::filesystem::path temporary = path;
  temporary += ".tmp";
  int error = 0;
  ZipPtr archive(zip_open(temporary.string().c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error));
  if (!archive) throw std::runtime_error(fmt::format("{}: cannot create the file", path.string()));
  const auto add = [&](const std::string& name, const void* data, std::size_t size) {
    zip_source_t* source = zip_source_buffer(archive.get(), data, size, 0);
    const zip_int64_t index = source ? zip_file_add(archive.get(), name.c_str(), source, ZIP_FL_ENC_UTF_8) : -1;
    if (index < 0) {
      if (source) zip_source_free(source);
      throw std::runtime_error(fmt::format("{}: cannot add {}: {}", path.string(), name, zip_strerror(archive.get())));
    }
    zip_file_set_mtime(archive.get(), static_cast<zip_uint64_t>(index), kEntryTime, 0);
  };
  add("manifest.json", manifest_text.data(), manifest_text.size());
  add("model.hlo", model.hlo_text.data(), model.hlo_text.size());
  for (std::size_t i = 0; i < bundles.size(); ++i) add(fmt::format("steps/{}.sbin", i), bundles[i].data(), bundles[i].size());
  if (zip_close(archive.get()) != 0) {
    throw std::runtime_error(fmt::format("{}: cannot write: {}", path.string(), zip_strerror(archive.get())));
  }
  archive.release();
  StoreWhatTheReaderWouldRefuse(temporary, path);
  std::filesystem::rename(temporary, path);
}

CompiledModel LoadModel(const std::filesystem::path& path) {
  ModelReader reader(path);
  const json manifest = reader.Manifest();
  if (Get<std::string>(manifest, "format", reader, "") != kModelFormat) reader.Fail("not a compiled model (format)");
  const unsigned version = Get<unsigned>(manifest, "version", reader, "");
  if (version != kModelVersion) {
    reader.Fail(fmt::format("model file version {}; this build reads version {}", version, kModelVersion));
  }
  CompiledModel model;
  model.config = Get<std::string>(manifest, "config", reader, "");
  model.source_name = Get<std::string>(manifest, "source", reader, "");
  model.hlo_text = reader.Entry(Get<std::string>(manifest, "hlo", reader, ""));
  model.module = PrepareModule(model.hlo_text, model.source_name);
  detail::MakeInputDilationExplicit(*model.module, model.source_name);
  model.steps = ReadSteps(Get<json>(manifest, "steps", reader, ""), *model.module, *model.module->entry, reader, "");
  ClassifyHostSteps(model);
  return model;
}

bool IsModelFile(const std::filesystem::path& path) {
  try {
    ModelReader reader(path);
    const json manifest = reader.Manifest();
    return manifest.value("format", "") == kModelFormat;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace systole::compiler
