#include "engine/train/elastic_steps.hpp"

#include <algorithm>
#include <chrono>

#include "engine/core/error.hpp"
#include "engine/core/liveness.hpp"
#include "engine/core/metric_keys.hpp"
#include "engine/core/rank_clock.hpp"
#include "engine/train/checkpoint.hpp"
#include "engine/train/trainer.hpp"
#include "engine/train/worker.hpp"

namespace laconic::train {
namespace {

using ElasticClock = std::chrono::steady_clock;

double elastic_seconds_since(ElasticClock::time_point start) {
  return std::chrono::duration<double>(ElasticClock::now() - start).count();
}

}  // namespace

ElasticSteps::ElasticSteps(comm::ElasticGroup& group, WorkerParts& parts, Trainer& trainer, comm::Communicator& comm,
                           MetricsSink& sink)
    : group_(group), parts_(parts), trainer_(trainer), comm_(comm), sink_(sink) {}

void ElasticSteps::start(std::int64_t steps, std::int64_t epoch, double wall, double first_loss) {
  between_steps(steps, epoch, wall, first_loss, [&] { check_identical_start(*parts_.model, comm_); });
}

void ElasticSteps::begin_step(std::int64_t step, std::int64_t epoch, double wall, double first_loss) {
  // A member (or the joiner) lost while a generation forms: the members that remain form the
  // next one, nothing of the step begun yet.
  between_steps(step, epoch, wall, first_loss, [&] { admit_due(step, epoch, wall, first_loss, true); });
  compressor_at_start_.clear();
  StateWriter out(compressor_at_start_);
  trainer_.compressor().save_state(out);
  data_at_start_ = trainer_.data_position();
}

void ElasticSteps::admit_due(std::int64_t step, std::int64_t epoch, double wall, double first_loss, bool admit_new) {
  if (const auto g = group_.membership().due(step, admit_new)) {
    const auto start = ElasticClock::now();
    parts_.liveness->enter(kRegroupingPhase);
    group_.membership().adopt(*g);
    forming_ = g;
    group_.regroup(*g);
    const double regroup = elastic_seconds_since(start);
    const auto handover_start = ElasticClock::now();
    hand_over(*g, epoch, wall, first_loss, nullptr);
    record(*g, epoch, wall, {0, regroup, elastic_seconds_since(handover_start)});
    forming_.reset();
    parts_.liveness->enter("training");
  }
}

void ElasticSteps::restore_step_start(bool data_too) {
  StateReader in(compressor_at_start_);
  trainer_.compressor().load_state(in);  // told its step again by the next advance()
  if (data_too) trainer_.set_data_position(data_at_start_);
}

bool ElasticSteps::recover(std::int64_t step, std::int64_t epoch, double wall, double first_loss, double seconds_in,
                           bool in_step) {
  const auto start = ElasticClock::now();
  group_.abandon();  // first: a peer blocked on this worker fails now, not at its timeout
  parts_.liveness->enter(kRegroupingPhase);
  const comm::Generation g = group_.membership().after_failure(step);
  parts_.liveness->tick();  // each wait is bounded on its own
  group_.regroup(g);
  parts_.liveness->tick();
  const double regroup = elastic_seconds_since(start);
  const bool behind = g.receives(comm_.rank());
  LACONIC_ENFORCE(!behind || g.step == step + 1, "worker ", comm_.rank(), " completed ", step,
                  " steps, the most advanced worker ", g.step, ": synchronous workers are at most a step apart");
  const auto handover_start = ElasticClock::now();
  // The failed step's changes undone; one behind keeps its place in the shard (its next batch)
  // and then takes the source's state.
  if (in_step) restore_step_start(!behind);
  hand_over(g, epoch, wall, first_loss, nullptr);
  record(g, epoch, wall, {seconds_in, regroup, elastic_seconds_since(handover_start)});
  parts_.liveness->enter("training");
  return !behind;
}

ElasticStart ElasticSteps::join() {
  ElasticStart start;
  hand_over(group_.membership().current(), 0, 0, 0, &start);
  start.step = group_.membership().current().step;
  return start;
}

void ElasticSteps::finish(std::int64_t steps, std::int64_t epoch, double wall, double first_loss) {
  // One admitted in the last step comes in, and ends. A worker lost in the last step: those that
  // completed it hand its state to those that did not, and all meet again here (those behind
  // after their loop's end).
  between_steps(steps, epoch, wall, first_loss, [&] {
    admit_due(steps, epoch, wall, first_loss, false);
    comm_.barrier();
  });
  if (comm_.rank() == 0) group_.membership().close();
}

void ElasticSteps::between_steps(std::int64_t steps, std::int64_t epoch, double wall, double first_loss,
                                 const std::function<void()>& work) {
  for (int attempt = 0;; ++attempt) {
    try {
      work();
      break;
    } catch (const CommError&) {
      if (attempt + 1 >= comm_.size()) throw;  // each round needs a loss: no more than the workers
      recover(steps, epoch, wall, first_loss, 0, false);
    }
  }
  forming_.reset();
}

void ElasticSteps::hand_over(const comm::Generation& g, std::int64_t epoch, double wall, double first_loss,
                             ElasticStart* received) {
  const comm::ByteCounters before = comm_.counters();
  const double start = rank_seconds();
  const auto count = [&] { trainer_.add_hand_over(comm_.counters().since(before), rank_seconds() - start); };
  try {
    transfer_state(g, epoch, wall, first_loss, received);
  } catch (const CommError&) {
    count();
    throw;
  }
  count();
  check_identical_start(*parts_.model, comm_);  // every member holds the same weights again
}

void ElasticSteps::transfer_state(const comm::Generation& g, std::int64_t epoch, double wall, double first_loss,
                                  ElasticStart* received) {
  if (g.receives(comm_.rank())) {
    const std::vector<std::uint8_t> bytes = comm_.receive_sized(g.source);
    StateReader in(bytes);
    load_model(in, *parts_.model);
    parts_.optimizer->load_state(in);
    parts_.schedule->load_state(in);
    trainer_.load_shared_state(in);
    const double source_wall = in.f64();
    const double source_first_loss = in.f64();
    if (received != nullptr) *received = {g.step, source_wall, source_first_loss};
  } else if (comm_.rank() == g.source) {
    std::vector<std::uint8_t> bytes;
    StateWriter out(bytes);
    save_model(out, *parts_.model);
    parts_.optimizer->save_state(out);
    parts_.schedule->save_state(out);
    trainer_.save_shared_state(out);
    out.f64(wall);
    out.f64(first_loss);
    // The bytes really sent, those of a hand-over a loss ends too (its step's join_bytes).
    double sent = 0;
    const auto record_sent = [&] {
      if (sent > 0) sink_.record({keys::kJoinBytes, g.step, epoch, comm_.rank(), wall, sent});
    };
    try {
      for (int r : g.members)
        if (g.receives(r)) sent += static_cast<double>(comm_.send_sized(r, bytes));
    } catch (const CommError&) {
      record_sent();
      throw;
    }
    record_sent();
  }
}

void ElasticSteps::record(const comm::Generation& g, std::int64_t epoch, double wall, const ChangeCost& cost) {
  if (comm_.rank() != 0) return;
  // A relaunch lost while its admission formed never joined: it does not leave either.
  const auto never_joined = [&](int r) {
    return forming_ && std::binary_search(forming_->joiners.begin(), forming_->joiners.end(), r);
  };
  bool lost = false;  // a member, not only such a relaunch
  for (int r : g.joiners) sink_.record({keys::kMemberChange, g.step, epoch, r, wall, 1.0});
  for (int r : g.leavers)
    if (!never_joined(r)) {
      sink_.record({keys::kMemberChange, g.step, epoch, r, wall, -1.0});
      lost = true;
    }
  sink_.record({keys::kMembers, g.step, epoch, 0, wall, static_cast<double>(g.members.size())});
  if (lost) sink_.record({keys::kDetectSeconds, g.step, epoch, 0, wall, cost.detect});
  sink_.record({keys::kRegroupSeconds, g.step, epoch, 0, wall, cost.regroup});
  sink_.record({keys::kJoinSeconds, g.step, epoch, 0, wall, cost.handover});
}

}  // namespace laconic::train
