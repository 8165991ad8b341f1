#pragma once
// The clock a rank's phases are timed on, per thread. A rank with a core of its own (a process
// per rank) is timed on the wall clock. Ranks placed as threads share the host's cores, more of
// them than cores, so their wall times measure the queue for a core; they are timed on their own
// thread's CPU time (CLOCK_THREAD_CPUTIME_ID): what they computed, which is what their step
// would cost on a core of its own (docs/network-model.md, "Thread ranks").
#include <time.h>

#include <chrono>

namespace laconic {

enum class RankClockKind {
  Wall,       ///< steady_clock: the rank has a core of its own
  ThreadCpu,  ///< the thread's CPU time: a rank that shares cores with others
};

namespace rank_clock_detail {
struct State {
  RankClockKind kind = RankClockKind::Wall;
  double step_start = 0;  ///< rank_seconds() when the step's compute began
  double modelled = 0;    ///< seconds the step spent without the CPU that count as compute (a straggler's delay)
};
inline State& state() {
  thread_local State s;
  return s;
}
}  // namespace rank_clock_detail

/// This thread's rank clock (Wall unless set).
inline RankClockKind rank_clock() { return rank_clock_detail::state().kind; }
inline void set_rank_clock(RankClockKind kind) { rank_clock_detail::state().kind = kind; }

/// Seconds on this thread's rank clock, from an arbitrary origin.
inline double rank_seconds() {
  if (rank_clock() == RankClockKind::Wall)
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

/// The step's compute begins now.
inline void begin_step_compute() {
  rank_clock_detail::state().step_start = rank_seconds();
  rank_clock_detail::state().modelled = 0;
}
/// `seconds` of the step count as compute though no CPU was used (a straggler's injected delay).
inline void add_step_compute(double seconds) { rank_clock_detail::state().modelled += seconds; }
/// The step's compute so far: when this rank arrives at its exchange.
inline double step_compute_so_far() {
  const auto& s = rank_clock_detail::state();
  return rank_seconds() - s.step_start + s.modelled;
}

}  // namespace laconic
