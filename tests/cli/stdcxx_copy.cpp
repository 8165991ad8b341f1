// A stand-in for PyTorch's wheel in libstdcxx_first_test.cpp: a library that exports its own copy
// of a libstdc++ function, which must never be called. Preloaded into laconic, it wins every
// lookup of that function unless laconic-engine puts the real libstdc++ first.
#include <cstdio>
#include <cstdlib>
#include <filesystem>

namespace std::filesystem {

uintmax_t remove_all(const path&, error_code&) {
  std::fputs("stdcxx_copy: a copy of std::filesystem::remove_all was called\n", stderr);
  std::abort();
}

}  // namespace std::filesystem
