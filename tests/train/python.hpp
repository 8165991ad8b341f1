#pragma once
// Debian's /usr/bin/python3 from the tests that hold laconic to its PyTorch twins.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include <catch2/catch.hpp>

namespace laconic::testing {

/// Whether /usr/bin/python3 imports torch (Debian's python3-torch, which the setup's test command installs).
inline bool python_has_torch() {
  return std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") == 0;
}

/// What `command` prints on its standard output.
inline std::string output_of(const std::string& command) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  REQUIRE(pipe != nullptr);
  std::string out;
  char buffer[4096];
  while (std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe.get())) out.append(buffer, n);
  return out;
}

}  // namespace laconic::testing
