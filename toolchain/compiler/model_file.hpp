// Compiled models on disk (.sbin). A model file is a zip archive holding
//   manifest.json      format "systole-model", version, configuration, the step list (host
//                      steps by instruction name; device steps with their bindings, epilogue
//                      and cycle estimate, each naming its program bundle);
//   model.hlo          the HLO source; loading re-runs the deterministic front-end passes
//                      (PrepareModule) so host steps find their instructions by name;
//   steps/N.sbin       one program bundle (asm/bundle.hpp) per device step.
// The reader verifies every member (archive::ZipReader: CRC, sizes, compression ratio) and
// checks every name, permutation and shape against the module and the programs, so a stale or
// corrupt file fails with a message instead of computing garbage.
#pragma once

#include <filesystem>
#include <string>

#include "toolchain/compiler/model.hpp"

namespace systole::compiler {

inline constexpr std::string_view kModelFormat = "systole-model";
inline constexpr unsigned kModelVersion = 1;

void SaveModel(const CompiledModel& model, const std::filesystem::path& path);
CompiledModel LoadModel(const std::filesystem::path& path);

// True when `path` is a model file (a zip whose manifest says "systole-model"), false for a
// program bundle or anything else.
bool IsModelFile(const std::filesystem::path& path);

}  // namespace systole::compiler
