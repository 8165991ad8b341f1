#include "cli/libstdcxx_first.hpp"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string_view>
#include <system_error>

namespace laconic::cli {

namespace {

bool is_libstdcxx(std::string_view path) { return path.find("libstdc++.so") != std::string_view::npos; }

// The path of the libstdc++ this process loaded (a dependency of its libraries), or "".
std::string loaded_libstdcxx() {
  std::string found;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* out) {
        if (info->dlpi_name == nullptr || !is_libstdcxx(info->dlpi_name)) return 0;
        *static_cast<std::string*>(out) = info->dlpi_name;
        return 1;
      },
      &found);
  return found;
}

}  // namespace

std::string libstdcxx_preload(const std::string& function_in, const std::string& libstdcxx, const char* preload) {
  // The program itself (a build without position-independent code) is no library to overtake.
  if (function_in.find(".so") == std::string::npos || is_libstdcxx(function_in) || libstdcxx.empty()) return "";
  const std::string now = preload == nullptr ? "" : preload;
  if (now.find(libstdcxx) != std::string::npos) return "";
  return now.empty() ? libstdcxx : libstdcxx + ":" + now;
}

void put_libstdcxx_first(char** argv) {
  using RemoveAll = std::uintmax_t (*)(const std::filesystem::path&, std::error_code&);
  const RemoveAll remove_all = &std::filesystem::remove_all;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(remove_all), &info) == 0 || info.dli_fname == nullptr) return;
  const std::string preload = libstdcxx_preload(info.dli_fname, loaded_libstdcxx(), std::getenv("LD_PRELOAD"));
  if (preload.empty()) return;
  ::setenv("LD_PRELOAD", preload.c_str(), 1);
  ::execv("/proc/self/exe", argv);
}

}  // namespace laconic::cli
