#pragma once
// Whether a metric is better larger or smaller: early stopping's rule, tuning's choice of the
// best trial, `laconic best`'s ranking. Parsed once, where the word comes in.
#include <optional>
#include <string_view>

namespace laconic {

enum class Goal {
  Max,  ///< larger is better (accuracy)
  Min,  ///< smaller is better (loss, perplexity, time, bytes)
};

/// "max" or "min", as files and flags write it.
inline const char* goal_name(Goal goal) { return goal == Goal::Max ? "max" : "min"; }

/// The goal a word names ("max", "min"), or nothing.
inline std::optional<Goal> parse_goal(std::string_view word) {
  if (word == "max") return Goal::Max;
  if (word == "min") return Goal::Min;
  return std::nullopt;
}

/// True when `a` is strictly better than `b` under `goal`.
inline bool better(Goal goal, double a, double b) { return goal == Goal::Max ? a > b : a < b; }

}  // namespace laconic
