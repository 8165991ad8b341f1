#include "engine/compress/error_feedback.hpp"

#include "engine/core/error.hpp"

namespace laconic::compress {

void ErrorFeedback::fit(std::size_t n) {
  if (residual_.empty()) residual_.assign(n, 0.0f);
  LACONIC_ENFORCE(residual_.size() == n, "expected a gradient of ", residual_.size(), " elements, got ", n);
}

std::span<const float> ErrorFeedback::add_gradient(std::span<const float> gradient) {
  for (std::size_t i = 0; i < gradient.size(); ++i) residual_[i] += gradient[i];
  return residual_;
}

void ErrorFeedback::subtract_decoded(const Compressor& inner, const Payload& payload) {
  // residual = corrected - sent without a second buffer: decoding adds, so decode into the
  // negated residual and negate back. Round-to-nearest is symmetric, so this is bit-for-bit
  // fl(corrected - sent), and exactly 0 where a value was sent as is.
  for (float& r : residual_) r = -r;
  inner.decompress_add(payload, residual_);
  for (float& r : residual_) r = -r;
}

}  // namespace laconic::compress
