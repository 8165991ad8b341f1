#include "engine/train/checkpoint_files.hpp"

#include <cstdio>
#include <filesystem>

#include "engine/core/error.hpp"

namespace laconic::train {

std::string checkpoint_path(const std::string& dir, int rank, std::int64_t step) {
  return (std::filesystem::path(dir) / str_cat("rank-", rank, ".step-", step, ".ckpt")).string();
}

std::optional<std::int64_t> checkpoint_step_of(const std::string& file_name) {
  int rank = -1;
  long long step = -1;
  int used = 0;
  if (std::sscanf(file_name.c_str(), "rank-%d.step-%lld.ckpt%n", &rank, &step, &used) != 2 ||
      used != static_cast<int>(file_name.size()) || rank < 0 || step < 0)
    return std::nullopt;
  return static_cast<std::int64_t>(step);
}

}  // namespace laconic::train
