// The assembly listing of a compiled model (`systole compile --listing MODEL.s`). The
// assembler takes one program per file, so every device step gets a file of its own,
// MODEL.N.s for the model's steps/N.sbin, that `systole asm` reassembles to that program
// exactly; the placement of every instruction is written in comments, in each step's file
// and in MODEL.s, the index (comments only).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "toolchain/compiler/model.hpp"

namespace systole::compiler {

struct ListingFile {
  std::filesystem::path path;
  std::string text;
};

// MODEL.N.s for device step N (numbered from 0 as the model file's steps/N.sbin).
std::filesystem::path StepListingPath(const std::filesystem::path& listing, std::size_t n);

// The index (`listing` itself) first, then one file per device step in order.
std::vector<ListingFile> ListingFiles(const CompiledModel& model, const std::filesystem::path& listing);

}  // namespace systole::compiler
