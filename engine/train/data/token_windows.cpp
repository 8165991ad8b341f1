#include "engine/train/data/token_windows.hpp"

#include "engine/core/error.hpp"

namespace laconic::train {

DataSplit token_windows(const torch::Tensor& stream, std::int64_t length, const std::string& what) {
  const std::int64_t tokens = stream.numel();
  const std::int64_t n = tokens == 0 ? 0 : (tokens - 1) / length;
  if (n == 0)
    throw ConfigError(str_cat(what, ": ", tokens, " tokens, shorter than one window of ", length, " + 1"));
  auto inputs = stream.narrow(0, 0, n * length).reshape({n, length}).clone();
  auto targets = stream.narrow(0, 1, n * length).reshape({n, length}).clone();
  return DataSplit{inputs, targets};
}

}  // namespace laconic::train
