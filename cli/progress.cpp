#include "cli/progress.hpp"

#include <cstdio>

namespace laconic::cli {

void ProgressLine::update(const ProgressMessage& p, std::int64_t epochs) {
  if (!enabled_) return;
  std::fprintf(stderr, "\r\033[K%s  epoch %lld/%lld  step %lld/%lld  loss %.4f  %.1f steps/s",
               label_.c_str(), static_cast<long long>(p.epoch + 1),
               static_cast<long long>(epochs), static_cast<long long>(p.step),
               static_cast<long long>(p.steps_per_epoch), p.loss, p.steps_per_second);
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressLine::clear() {
  if (!enabled_ || !drawn_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace laconic::cli
