#pragma once
// PyTorch's own LibTorch (pip's wheel, the one a GPU machine has) exports copies of libstdc++'s
// functions from libtorch.so. A program whose libraries name libtorch.so before libstdc++ calls
// those copies, and they can crash in a program built by another GCC: on an H200 node (PyTorch
// 2.11, Ubuntu's GCC) std::filesystem::remove_all jumped to address 0 in laconic-engine's first
// step. Linking libstdc++ first did not change the program's library order there (the node's
// linker dropped it as not needed), so laconic-engine checks at start where such a function
// resolved and, when it is not libstdc++, runs itself again with libstdc++ preloaded, which puts
// it first in every lookup. Debian's LibTorch exports none: there nothing happens.
#include <string>

namespace laconic::cli {

/// The LD_PRELOAD to run again with, or "" to go on: `function_in` is the file a libstdc++
/// function resolved into, `libstdcxx` the loaded libstdc++'s path ("" when unknown), `preload`
/// the LD_PRELOAD set now (nullptr when none). "" when the function is libstdc++'s, when libstdc++
/// is unknown or already preloaded (the second start: never a loop), and when `function_in` is no
/// shared library (the program itself).
std::string libstdcxx_preload(const std::string& function_in, const std::string& libstdcxx, const char* preload);

/// Runs this program again (argv) with libstdc++ preloaded when a libstdc++ function resolved
/// elsewhere; returns when nothing needs doing or the exec failed.
void put_libstdcxx_first(char** argv);

}  // namespace laconic::cli
