#include "engine/compress/error_feedback.hpp"

#include <algorithm>

#include "engine/core/error.hpp"

namespace laconic::compress {

void ErrorFeedback::compress(Compressor& inner, std::span<const float> gradient,
                             Payload& payload) {
  if (residual_.empty()) residual_.assign(gradient.size(), 0.0f);
  LACONIC_ENFORCE(residual_.size() == gradient.size(), "expected a gradient of ",
                  residual_.size(), " elements, got ", gradient.size());
  corrected_.resize(gradient.size());
  for (std::size_t i = 0; i < gradient.size(); ++i) corrected_[i] = gradient[i] + residual_[i];
  inner.compress(corrected_, payload);
  // residual = corrected - decompress(payload): start from corrected and subtract what was sent.
  std::copy(corrected_.begin(), corrected_.end(), residual_.begin());
  std::vector<float>& sent = corrected_;
  std::fill(sent.begin(), sent.end(), 0.0f);
  inner.decompress_add(payload, sent);
  for (std::size_t i = 0; i < residual_.size(); ++i) residual_[i] -= sent[i];
}

}  // namespace laconic::compress
