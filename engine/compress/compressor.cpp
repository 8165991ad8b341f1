#include "engine/compress/compressor.hpp"

#include "engine/core/error.hpp"

namespace laconic::compress {

std::size_t Compressor::exchange(std::span<float> gradient, SumReducer& reducer) {
  (void)gradient;
  (void)reducer;
  throw InvariantError(
      str_cat("compressor '", name(), "' does not exchange itself; use compress() and decompress_add()"));
}

}  // namespace laconic::compress
