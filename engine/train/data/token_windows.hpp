#pragma once
// A language-modelling split cut from a stream of tokens: what text and perldoc share.
#include <cstdint>
#include <string>

#include "engine/train/data/dataset.hpp"

namespace laconic::train {

/// Non-overlapping windows of `length` tokens cut from `stream` (1-D: int64 word ids, or uint8
/// bytes, kept as uint8 to take an eighth of the memory): inputs [N, length] and targets [N,
/// length], the same window shifted by one token, both of the stream's type; a last partial
/// window is dropped. ConfigError naming `what` (the corpus and split) when the stream is shorter
/// than one window plus one token.
DataSplit token_windows(const torch::Tensor& stream, std::int64_t length, const std::string& what);

}  // namespace laconic::train
