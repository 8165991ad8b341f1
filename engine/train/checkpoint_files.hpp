#pragma once
// Where a rank's checkpoint lives and how its name says its step: written and read next to each
// other, and without LibTorch, so that the controller names and tidies checkpoints it never reads.
#include <cstdint>
#include <optional>
#include <string>

namespace laconic::train {

/// `dir`/rank-R.step-S.ckpt.
std::string checkpoint_path(const std::string& dir, int rank, std::int64_t step);

/// The step S of a checkpoint file named as checkpoint_path() names it ("rank-R.step-S.ckpt",
/// without its directory); nothing for any other name.
std::optional<std::int64_t> checkpoint_step_of(const std::string& file_name);

}  // namespace laconic::train
