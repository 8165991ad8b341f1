#include "controller/progress.hpp"

#include <unistd.h>

#include <cmath>

#include "engine/core/error.hpp"
#include "reports/format.hpp"

namespace laconic::controller {

ProgressMode progress_mode_for(std::FILE* out, bool quiet) {
  if (quiet) return ProgressMode::Quiet;
  return ::isatty(::fileno(out)) == 1 ? ProgressMode::Live : ProgressMode::Log;
}

std::string eta_text(double seconds) {
  if (std::isnan(seconds) || seconds < 0) return "?";
  const auto s = static_cast<long>(std::lround(seconds));
  char buf[32];
  if (s < 60)
    std::snprintf(buf, sizeof buf, "%lds", s);
  else if (s < 3600)
    std::snprintf(buf, sizeof buf, "%ldm%02lds", s / 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%ldh%02ldm", s / 3600, (s % 3600) / 60);
  return buf;
}

void SweepClock::run_done(double seconds) {
  ++done_;
  done_seconds_ += seconds;
}

double SweepClock::run_left(const ProgressMessage& p, std::int64_t epochs) {
  if (p.steps_per_second <= 0 || p.steps_per_epoch <= 0) return std::nan("");
  const std::int64_t total = epochs * p.steps_per_epoch;
  const std::int64_t done = p.epoch * p.steps_per_epoch + p.step;
  return static_cast<double>(std::max<std::int64_t>(0, total - done)) / p.steps_per_second;
}

double SweepClock::sweep_left(double run_left, double elapsed) const {
  if (std::isnan(run_left)) return std::nan("");
  const std::size_t started = done_ + 1;
  const double later = runs_ > started ? static_cast<double>(runs_ - started) : 0.0;
  const double per_run = done_ > 0 ? done_seconds_ / static_cast<double>(done_) : elapsed + run_left;
  return run_left + later * per_run;
}

void Progress::begin(const std::string& label, std::int64_t epochs) {
  label_ = label;
  epochs_ = epochs;
  last_.reset();
  started_ = last_line_ = Clock::now();
  if (mode_ == ProgressMode::Log) {
    std::fprintf(out_, "%s: started\n", label_.c_str());
    std::fflush(out_);
  }
}

std::string Progress::line(const std::string& extra) const {
  if (!last_) return label_ + extra;
  const ProgressMessage& p = *last_;
  const double elapsed = std::chrono::duration<double>(Clock::now() - started_).count();
  const double run_left = SweepClock::run_left(p, epochs_);
  char buf[160];
  // A diverged loss reads "nan" or "inf", never printf's "-nan".
  const std::string loss = std::isfinite(p.loss) ? reports::fixed(p.loss, 4) : reports::significant_digits(p.loss);
  std::snprintf(buf, sizeof buf, "  epoch %lld/%lld  step %lld/%lld  loss %s  %.1f steps/s",
                static_cast<long long>(p.epoch + 1), static_cast<long long>(epochs_), static_cast<long long>(p.step),
                static_cast<long long>(p.steps_per_epoch), loss.c_str(), p.steps_per_second);
  return str_cat(label_, buf, extra, "  left: run ", eta_text(run_left), ", sweep ",
                 eta_text(clock_.sweep_left(run_left, elapsed)));
}

void Progress::write_log_line(const std::string& extra) {
  std::fprintf(out_, "%s\n", line(extra).c_str());
  std::fflush(out_);
  last_line_ = Clock::now();
}

void Progress::update(const ProgressMessage& p) {
  last_ = p;
  if (mode_ == ProgressMode::Live) {
    std::fprintf(out_, "\r\033[K%s", line("").c_str());
    std::fflush(out_);
    drawn_ = true;
  } else if (mode_ == ProgressMode::Log &&
             std::chrono::duration<double>(Clock::now() - last_line_).count() >= log_interval_) {
    write_log_line("");
  }
}

void Progress::waiting(const std::string& waiting_on) {
  if (waiting_on.empty() || mode_ == ProgressMode::Quiet) return;
  const std::string note = "  waiting: " + waiting_on;
  const auto since = [](Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); };
  if (mode_ == ProgressMode::Log && since(last_line_) >= log_interval_) write_log_line(note);
  if (mode_ == ProgressMode::Live && since(last_drawn_) >= 1) {
    std::fprintf(out_, "\r\033[K%s", line(note).c_str());
    std::fflush(out_);
    drawn_ = true;
    last_drawn_ = Clock::now();
  }
}

void Progress::evaluated(std::int64_t epoch, const std::string& key, double value) {
  if (mode_ != ProgressMode::Log) return;
  if (last_) last_->epoch = epoch;
  write_log_line(str_cat("  ", key, " ", reports::significant_digits(value)));
}

void Progress::end() {
  clear();
  clock_.run_done(std::chrono::duration<double>(Clock::now() - started_).count());
}

void Progress::clear() {
  if (mode_ != ProgressMode::Live || !drawn_) return;
  std::fprintf(out_, "\r\033[K");
  std::fflush(out_);
  drawn_ = false;
}

}  // namespace laconic::controller
