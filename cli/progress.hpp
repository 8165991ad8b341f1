#pragma once
#include <string>

#include "engine/core/worker_message.hpp"

namespace laconic::cli {

/// The one-line progress display of `laconic run`, redrawn in place on a terminal and silent
/// otherwise (logs get one result line per run instead).
class ProgressLine {
 public:
  /// `enabled` is normally isatty(stderr).
  explicit ProgressLine(bool enabled) : enabled_(enabled) {}
  /// Starts the line of a run: "[1/2] compressor=none,seed=1".
  void begin(const std::string& label) { label_ = label; }
  /// Redraws: "[1/2] compressor=none,seed=1  epoch 1/1  step 120/469  loss 0.612  38.2 steps/s".
  void update(const ProgressMessage& progress, std::int64_t epochs);
  /// Clears the line so that the next output starts clean.
  void clear();

 private:
  bool enabled_;
  bool drawn_ = false;
  std::string label_;
};

}  // namespace laconic::cli
