#include "cli/version.hpp"

#include <sqlite3.h>

#include "cli/build_info.hpp"
#include "cli/git_describe.hpp"

namespace laconic::cli {

std::string version_text() {
  return std::string("laconic ") + LACONIC_VERSION_STRING + " (git " + LACONIC_GIT_DESCRIBE + ")\n" + "LibTorch " +
         LACONIC_TORCH_VERSION + "\n" + "Gloo " + LACONIC_GLOO_VERSION + "\n" + "Lua " + LACONIC_LUA_VERSION + "\n" +
         "SQLite " + sqlite3_libversion() + "\n" + "CUDA: " + LACONIC_TORCH_CUDA + "; " + LACONIC_KERNELS_CUDA;
}

}  // namespace laconic::cli
