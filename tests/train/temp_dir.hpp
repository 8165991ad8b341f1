#pragma once
// A temporary directory for one test, removed with everything in it when the test ends.
#include <filesystem>
#include <fstream>
#include <string>

#include "rank_threads.hpp"

namespace laconic::testing {

struct TempDir {
  std::string path = make_temp_dir();
  TempDir() = default;
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  /// Writes `text` to the file `name` in it; returns the file's path.
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream out(path + "/" + name, std::ios::binary);
    out << text;
    return path + "/" + name;
  }
};

}  // namespace laconic::testing
