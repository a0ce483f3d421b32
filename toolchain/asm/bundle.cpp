#include "toolchain/asm/bundle.hpp"

#include <fmt/format.h>
#include <zip.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "toolchain/archive/zip_reader.hpp"
#include "toolchain/asm/assembler.hpp"

namespace systole::assembly {
// The device image types (arch/image/program.hpp) this file builds and reads.
using image::Program;
using image::DataSegment;
using image::TensorDesc;
using image::DataType;
using image::DataTypeName;
using image::DataTypeFromName;
using image::DataTypeNames;
using image::SourceLine;
using image::IsValidName;
using image::ValidateProgram;
using image::ProgramProblem;

namespace {

using nlohmann::json;

constexpr std::string_view kManifestName = "manifest.json";
constexpr std::string_view kTextName = "text.bin";
constexpr std::uint64_t kMaxManifestBytes = std::uint64_t{64} << 20;
constexpr archive::Limits kBundleLimits{.max_member_bytes = kMaxBundleEntryBytes};
// Entries get a fixed timestamp (1980-01-01, the earliest a zip can hold), so the same
// program always gives the same bundle bytes.
constexpr time_t kEntryTime = 315532800;

std::string DataFileName(std::string_view name) { return fmt::format("data/{}.bin", name); }

struct ZipCloser {
  void operator()(zip_t* archive) const { zip_discard(archive); }
};
struct ZipSourceFreer {
  void operator()(zip_source_t* source) const { zip_source_free(source); }
};
using ZipPtr = std::unique_ptr<zip_t, ZipCloser>;
using ZipSourcePtr = std::unique_ptr<zip_source_t, ZipSourceFreer>;

// zip_error_t owns a message buffer; this frees it.
struct ZipError {
  zip_error_t error;
  ZipError() { zip_error_init(&error); }
  ~ZipError() { zip_error_fini(&error); }
  ZipError(const ZipError&) = delete;
  ZipError& operator=(const ZipError&) = delete;
  std::string Message() { return zip_error_strerror(&error); }
};

// Writing ------------------------------------------------------------------------------------

json TensorJson(const TensorDesc& tensor) {
  return {{"name", tensor.name},
          {"address", tensor.address},
          {"dtype", DataTypeName(tensor.dtype)},
          {"shape", tensor.shape}};
}

std::string ManifestText(const Program& program) {
  json manifest;
  manifest["format"] = kBundleFormat;
  manifest["version"] = kBundleVersion;
  manifest["isa"] = {{"major", isa::kIsaVersionMajor}, {"minor", isa::kIsaVersionMinor}};
  manifest["config"] = program.config ? json(*program.config) : json(nullptr);
  manifest["text"] = {{"address", program.text_address},
                      {"instructions", program.words.size()},
                      {"file", kTextName}};
  manifest["data"] = json::array();
  for (const DataSegment& segment : program.data) {
    manifest["data"].push_back({{"name", segment.name},
                                {"address", segment.address},
                                {"dtype", DataTypeName(segment.dtype)},
                                {"bytes", segment.bytes.size()},
                                {"file", DataFileName(segment.name)}});
  }
  manifest["inputs"] = json::array();
  for (const TensorDesc& tensor : program.inputs) manifest["inputs"].push_back(TensorJson(tensor));
  manifest["outputs"] = json::array();
  for (const TensorDesc& tensor : program.outputs)
    manifest["outputs"].push_back(TensorJson(tensor));
  if (!program.source_map.empty()) {
    // Files once, then [file index, line] per instruction.
    std::vector<std::string> files;
    json lines = json::array();
    for (const SourceLine& source : program.source_map) {
      auto it = std::find(files.begin(), files.end(), source.file);
      if (it == files.end()) it = files.insert(files.end(), source.file);
      lines.push_back({it - files.begin(), source.line});
    }
    manifest["source_map"] = {{"files", files}, {"lines", lines}};
  }
  return manifest.dump(2) + "\n";
}

// `stored`: the entry's bytes as they are (ZIP_CM_STORE) instead of deflated.
void AddEntry(zip_t* archive, std::string_view name, const void* data, std::size_t size, bool stored) {
  zip_source_t* source = zip_source_buffer(archive, data, size, 0);
  if (source == nullptr)
    throw BundleError(fmt::format("cannot add {}: {}", name, zip_strerror(archive)));
  const zip_int64_t index =
      zip_file_add(archive, std::string(name).c_str(), source, ZIP_FL_ENC_UTF_8);
  if (index < 0) {
    zip_source_free(source);
    throw BundleError(fmt::format("cannot add {}: {}", name, zip_strerror(archive)));
  }
  zip_file_set_mtime(archive, static_cast<zip_uint64_t>(index), kEntryTime, 0);
  if (stored) zip_set_file_compression(archive, static_cast<zip_uint64_t>(index), ZIP_CM_STORE, 0);
}

// Reading ------------------------------------------------------------------------------------

class Reader {
 public:
  Reader(std::span<const std::uint8_t> bytes, std::string_view origin)
      : archive_(Open(bytes, origin)), origin_(origin) {}

  Program Read() {
    const std::vector<std::uint8_t> manifest_bytes = Entry(kManifestName, std::nullopt);
    const json manifest = json::parse(manifest_bytes.begin(), manifest_bytes.end(), nullptr, false);
    if (manifest.is_discarded() || !manifest.is_object()) {
      Fail(fmt::format("{} is not a JSON object", kManifestName));
    }
    if (String(manifest, "format", "") != kBundleFormat) {
      Fail(fmt::format("{}: 'format' is not \"{}\"", kManifestName, kBundleFormat));
    }
    const std::uint64_t version = Unsigned(manifest, "version", "");
    if (version != kBundleVersion) {
      Fail(fmt::format("unsupported bundle version {} (this build reads version {})", version,
                       kBundleVersion));
    }
    const json& isa_version = Member(manifest, "isa", "", json::value_t::object);
    const std::uint64_t major = Unsigned(isa_version, "major", "isa.");
    if (major != isa::kIsaVersionMajor) {
      Fail(fmt::format("built for ISA version {}.x; this build implements {}.{}", major,
                       isa::kIsaVersionMajor, isa::kIsaVersionMinor));
    }

    Program program;
    const json& config = Member(manifest, "config", "", json::value_t::null, true);
    if (config.is_string()) program.config = config.get<std::string>();

    const json& text = Member(manifest, "text", "", json::value_t::object);
    program.text_address = Unsigned(text, "address", "text.");
    const std::uint64_t count = Unsigned(text, "instructions", "text.");
    if (String(text, "file", "text.") != kTextName) Fail("manifest: 'text.file' must be text.bin");
    if (count > kMaxBundleEntryBytes / isa::kInstructionBytes) {
      Fail(fmt::format("manifest: {} instructions is too many", count));
    }
    const std::vector<std::uint8_t> words = Entry(kTextName, count * isa::kInstructionBytes);
    program.words.resize(count);
    for (std::size_t i = 0; i < count; ++i) {
      std::copy_n(words.begin() + static_cast<std::ptrdiff_t>(i * isa::kInstructionBytes),
                  isa::kInstructionBytes, program.words[i].begin());
    }

    const json& data = Member(manifest, "data", "", json::value_t::array);
    for (std::size_t i = 0; i < data.size(); ++i) {
      const std::string where = fmt::format("data[{}].", i);
      const json& item = Object(data[i], where);
      DataSegment segment;
      segment.name = Name(item, where);
      segment.address = Unsigned(item, "address", where);
      segment.dtype = Dtype(item, where);
      const std::uint64_t bytes = Unsigned(item, "bytes", where);
      const std::string file = DataFileName(segment.name);
      if (String(item, "file", where) != file) {
        Fail(fmt::format("manifest: '{}file' must be {}", where, file));
      }
      segment.bytes = Entry(file, bytes);
      program.data.push_back(std::move(segment));
    }
    for (const auto& [key, list] :
         {std::pair{"inputs", &program.inputs}, std::pair{"outputs", &program.outputs}}) {
      const json& tensors = Member(manifest, key, "", json::value_t::array);
      for (std::size_t i = 0; i < tensors.size(); ++i) {
        const std::string where = fmt::format("{}[{}].", key, i);
        const json& item = Object(tensors[i], where);
        TensorDesc tensor;
        tensor.name = Name(item, where);
        tensor.address = Unsigned(item, "address", where);
        tensor.dtype = Dtype(item, where);
        const json& shape = Member(item, "shape", where, json::value_t::array);
        if (shape.size() > 8)
          Fail(fmt::format("manifest: '{}shape' has too many dimensions", where));
        for (const json& dim : shape) {
          if (!dim.is_number_unsigned()) {
            Fail(fmt::format("manifest: '{}shape' must hold non-negative integers", where));
          }
          tensor.shape.push_back(dim.get<std::uint64_t>());
        }
        list->push_back(std::move(tensor));
      }
    }
    if (manifest.contains("source_map")) ReadSourceMap(manifest["source_map"], program);

    const std::vector<ProgramProblem> problems = ValidateProgram(program);
    if (!problems.empty()) Fail(fmt::format("invalid program: {}", problems.front().message));
    return program;
  }

 private:
  [[noreturn]] void Fail(const std::string& message) const {
    throw BundleError(fmt::format("{}: {}", origin_, message));
  }

  // The verified bytes of entry `name` (archive::ZipReader): exactly `expected` of them if
  // given, else at most the manifest limit.
  std::vector<std::uint8_t> Entry(std::string_view name, std::optional<std::uint64_t> expected) {
    try {
      return expected ? archive_.ReadExactly(name, *expected) : archive_.ReadAtMost(name, kMaxManifestBytes);
    } catch (const archive::ZipError& error) {
      throw BundleError(error.what());
    }
  }

  static archive::ZipReader Open(std::span<const std::uint8_t> bytes, std::string_view origin) {
    try {
      return archive::ZipReader::OpenBytes(bytes, std::string(origin), "bundle", kBundleLimits);
    } catch (const archive::ZipError& error) {
      throw BundleError(error.what());
    }
  }

  const json& Member(const json& object, std::string_view key, std::string_view where,
                     json::value_t type, bool string_or_null = false) const {
    const auto it = object.find(key);
    if (it == object.end()) Fail(fmt::format("manifest: '{}{}' is missing", where, key));
    const bool ok = string_or_null ? (it->is_null() || it->is_string()) : it->type() == type;
    if (!ok) {
      Fail(fmt::format("manifest: '{}{}' must be {}", where, key,
                       string_or_null ? "a string or null" : json(type).type_name()));
    }
    return *it;
  }

  const json& Object(const json& value, std::string_view where) const {
    if (!value.is_object()) Fail(fmt::format("manifest: '{}' must be an object", where));
    return value;
  }

  std::uint64_t Unsigned(const json& object, std::string_view key, std::string_view where) const {
    const auto it = object.find(key);
    if (it == object.end() || !it->is_number_unsigned()) {
      Fail(fmt::format("manifest: '{}{}' must be a non-negative integer", where, key));
    }
    return it->get<std::uint64_t>();
  }

  std::string String(const json& object, std::string_view key, std::string_view where) const {
    const auto it = object.find(key);
    if (it == object.end() || !it->is_string()) {
      Fail(fmt::format("manifest: '{}{}' must be a string", where, key));
    }
    return it->get<std::string>();
  }

  std::string Name(const json& object, std::string_view where) const {
    std::string name = String(object, "name", where);
    if (!IsValidName(name)) {
      Fail(fmt::format("manifest: '{}name' is not a valid name", where));
    }
    return name;
  }

  DataType Dtype(const json& object, std::string_view where) const {
    const auto dtype = DataTypeFromName(String(object, "dtype", where));
    if (!dtype) {
      Fail(fmt::format("manifest: '{}dtype' must be one of: {}", where, DataTypeNames()));
    }
    return *dtype;
  }

  void ReadSourceMap(const json& map, Program& program) const {
    if (!map.is_object()) Fail("manifest: 'source_map' must be an object");
    const json& files = Member(map, "files", "source_map.", json::value_t::array);
    const json& lines = Member(map, "lines", "source_map.", json::value_t::array);
    if (lines.size() != program.words.size()) {
      Fail("manifest: 'source_map.lines' must have one entry per instruction");
    }
    for (const json& file : files) {
      if (!file.is_string()) Fail("manifest: 'source_map.files' must hold strings");
    }
    for (const json& entry : lines) {
      if (!entry.is_array() || entry.size() != 2 || !entry[0].is_number_unsigned() ||
          !entry[1].is_number_unsigned() || entry[0].get<std::uint64_t>() >= files.size() ||
          entry[1].get<std::uint64_t>() > UINT32_MAX) {
        Fail("manifest: 'source_map.lines' entries must be [file index, line]");
      }
      program.source_map.push_back({files[entry[0].get<std::size_t>()].get<std::string>(),
                                    static_cast<std::uint32_t>(entry[1].get<std::uint64_t>())});
    }
  }

  archive::ZipReader archive_;
  std::string origin_;
};

std::vector<std::uint8_t> ReadFileBytes(const std::filesystem::path& path, std::uint64_t limit) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    throw BundleError(fmt::format("{}: cannot read the file", path.string()));
  }
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  if (error || size > limit)
    throw BundleError(fmt::format("{}: cannot read the file", path.string()));
  std::ifstream in(path, std::ios::binary);
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(size));
  in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!in) throw BundleError(fmt::format("{}: cannot read the file", path.string()));
  return bytes;
}

}  // namespace

namespace {

// The bundle's bytes, with the entries named in `stored` stored rather than deflated.
std::vector<std::uint8_t> Serialize(const Program& program, const std::string& manifest,
                                    const std::vector<std::string>& stored) {
  const auto is_stored = [&stored](std::string_view name) {
    return std::find(stored.begin(), stored.end(), name) != stored.end();
  };
  ZipError error;
  ZipSourcePtr buffer(zip_source_buffer_create(nullptr, 0, 0, &error.error));
  if (!buffer) throw BundleError(fmt::format("cannot create a bundle: {}", error.Message()));
  zip_source_keep(buffer.get());  // survives zip_close, which writes the archive into it
  ZipPtr archive(zip_open_from_source(buffer.get(), ZIP_TRUNCATE, &error.error));
  if (!archive) {
    zip_source_free(buffer.get());  // drop the reference zip_open_from_source did not take
    throw BundleError(fmt::format("cannot create a bundle: {}", error.Message()));
  }
  // The buffers handed to libzip must live until zip_close.
  AddEntry(archive.get(), kManifestName, manifest.data(), manifest.size(), is_stored(kManifestName));
  AddEntry(archive.get(), kTextName, program.words.data(), program.TextBytes(), is_stored(kTextName));
  for (const DataSegment& segment : program.data) {
    const std::string name = DataFileName(segment.name);
    AddEntry(archive.get(), name, segment.bytes.data(), segment.bytes.size(), is_stored(name));
  }
  if (zip_close(archive.get()) != 0) {
    throw BundleError(fmt::format("cannot write the bundle: {}", zip_strerror(archive.get())));
  }
  archive.release();  // zip_close freed it

  zip_stat_t stat;
  zip_stat_init(&stat);
  if (zip_source_stat(buffer.get(), &stat) != 0 || zip_source_open(buffer.get()) != 0) {
    throw BundleError("cannot read back the written bundle");
  }
  std::vector<std::uint8_t> bytes(stat.size);
  const zip_int64_t got = zip_source_read(buffer.get(), bytes.data(), bytes.size());
  zip_source_close(buffer.get());
  if (got < 0 || static_cast<std::uint64_t>(got) != bytes.size()) {
    throw BundleError("cannot read back the written bundle");
  }
  return bytes;
}

}  // namespace

std::vector<std::uint8_t> SerializeBundle(const Program& program) {
  const std::vector<ProgramProblem> problems = ValidateProgram(program);
  if (!problems.empty()) {
    throw BundleError(fmt::format("cannot write an invalid program: {}", problems.front().message));
  }
  const std::string manifest = ManifestText(program);
  // Deflated, unless an entry deflates beyond the ratio the reader accepts (mostly-zero packed
  // weights): then again with those entries stored, which costs a second pass only then.
  std::vector<std::uint8_t> bytes = Serialize(program, manifest, {});
  const std::vector<std::string> too_compressible = archive::MembersBeyondRatio(bytes, kBundleLimits);
  return too_compressible.empty() ? bytes : Serialize(program, manifest, too_compressible);
}

Program ParseBundle(std::span<const std::uint8_t> bytes, std::string_view origin) {
  return Reader(bytes, origin).Read();
}

void WriteBundle(const Program& program, const std::filesystem::path& path) {
  const std::vector<std::uint8_t> bytes = SerializeBundle(program);
  std::filesystem::path temporary = path;
  temporary += ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) throw BundleError(fmt::format("{}: cannot write the file", path.string()));
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) {
    std::filesystem::remove(temporary, error);
    throw BundleError(fmt::format("{}: cannot write the file", path.string()));
  }
}

Program ReadBundle(const std::filesystem::path& path) {
  // A bundle is at most the text, the data and a manifest; 16 GiB is far beyond any real one.
  const std::vector<std::uint8_t> bytes = ReadFileBytes(path, std::uint64_t{16} << 30);
  return ParseBundle(bytes, path.string());
}

Program LoadProgram(const std::filesystem::path& path) {
  const std::string extension = path.extension().string();
  if (extension == ".sbin") return ReadBundle(path);
  if (extension == ".s" || extension == ".S" || extension == ".asm") return AssembleFile(path);
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  in.read(magic, sizeof magic);
  if (in && std::string_view(magic, 4) == std::string_view("PK\x03\x04", 4))
    return ReadBundle(path);
  return AssembleFile(path);
}

}  // namespace systole::assembly
