#pragma once
// What `laconic --version` prints.
#include <string>

namespace laconic::cli {

/// "laconic 0.1.0 (git 2a7d8c6-dirty)" and the versions of LibTorch, Gloo, Lua and SQLite it was
/// built with (SQLite's is the library loaded at run time), one per line, and a line "CUDA: ..."
/// saying whether that LibTorch has CUDA and whether the compressor kernels were built with it.
std::string version_text();

}  // namespace laconic::cli
