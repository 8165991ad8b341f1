#pragma once
#include <memory>
#include <vector>

#include "engine/compress/compressor.hpp"

namespace laconic::compress {

/// Error feedback (Seide et al. 2014; Stich et al. 2018; Algorithm 1 of Eghlidi & Jaggi 2020):
/// what compression drops is kept in a residual and added to the next gradient, so that
/// sent + residual always equals everything fed in.
class ErrorFeedback {
 public:
  /// Compresses `gradient + residual` with `inner`, then keeps what the payload does not carry.
  /// Works in place: the only state is the residual (one float per element).
  void compress(Compressor& inner, std::span<const float> gradient, Payload& payload);

  /// The residual after the last compress() (empty before the first).
  std::span<const float> residual() const { return residual_; }

 private:
  std::vector<float> residual_;
};

}  // namespace laconic::compress
