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
  double phase_start = 0;  ///< rank_seconds() when the phase (a step, an evaluation) began
  double origin = 0;       ///< the derived clock's reading then
  double modelled = 0;     ///< seconds of the phase without the CPU that count as compute (a straggler's delay)
  double waited = 0;       ///< seconds of the phase spent waiting for what other ranks sent
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

/// Seconds on this thread's rank clock since `start` (a rank_seconds() reading): how phases are timed.
inline double seconds_since(double start) { return rank_seconds() - start; }

// A thread rank's derived clock: where the run would stand with a core per rank. It advances with
// the rank's CPU time and a straggler's delay, and with waiting: every message a thread rank
// receives carries its sender's derived clock (comm::MemoryCommunicator), and a message cannot be
// received before it was sent, so the receiver's clock moves up to the sender's when it lags.
// Whatever the pattern (a ring, a server's fan-in and fan-out, gossip with neighbours, an
// averaging every few steps) each rank waits for what it depends on, as a process would.

/// A phase of the rank's time begins (a step, an evaluation), with the derived clock at `origin`.
inline void begin_phase(double origin) {
  auto& s = rank_clock_detail::state();
  s.phase_start = rank_seconds();
  s.origin = origin;
  s.modelled = 0;
  s.waited = 0;
}
/// `seconds` of the phase count as compute though no CPU was used (a straggler's injected delay).
inline void add_step_compute(double seconds) { rank_clock_detail::state().modelled += seconds; }
/// The derived clock now: the phase's origin, its CPU and modelled compute, and its waits.
inline double derived_now() {
  const auto& s = rank_clock_detail::state();
  return s.origin + rank_seconds() - s.phase_start + s.modelled + s.waited;
}
/// A message sent at `sender_clock` has been received: the clock moves up to it if behind.
inline void receive_sent_at(double sender_clock) {
  const double behind = sender_clock - derived_now();
  if (behind > 0) rank_clock_detail::state().waited += behind;
}
/// Seconds of the phase spent waiting so far.
inline double phase_waited() { return rank_clock_detail::state().waited; }

}  // namespace laconic
