#pragma once
// An elastic run's side of the worker loop (elastic = true; engine/comm/elastic.hpp): a step that
// loses a peer is abandoned, the members that remain form the next generation from the most
// advanced one's state, and relaunched workers are admitted at a step's start with it.
//
// Under synchronous SGD a step's update is applied only after its exchange, so a worker that saw
// the failure either completed the step before (its peers may not have: it is one step ahead) or
// did not. The generation trains from the most steps any member completed: a member that
// completed them takes its failed step again, from the same place in its shard and with the
// compressor's state of the step's start; one a step behind takes the source's weights and
// optimizer state (its own failed step's gradient is dropped) and goes on with its next batch.
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "engine/comm/communicator.hpp"
#include "engine/comm/elastic.hpp"
#include "engine/core/metrics.hpp"

namespace laconic::train {

struct WorkerParts;  // worker.hpp
class Trainer;       // trainer.hpp

/// Where a relaunched worker starts: its generation's step, and the run's clock and first loss
/// as the worker whose state it took has them.
struct ElasticStart {
  std::int64_t step = 0;
  double wall = 0;
  double first_loss = 0;
};

class ElasticSteps {
 public:
  ElasticSteps(comm::ElasticGroup& group, WorkerParts& parts, Trainer& trainer, comm::Communicator& comm,
               MetricsSink& sink);

  /// Before the first step (of the run, or of its resume from `steps`): the members check that
  /// the replicas start equal; a loss during it is recovered from.
  void start(std::int64_t steps, std::int64_t epoch, double wall, double first_loss);
  /// At a step's start: a generation that begins now connects its members and hands the joiners
  /// the state (one that loses a member on the way is recovered from); then what the step
  /// changes before its exchange completes is kept (the compressor's state, the place in the
  /// shard).
  void begin_step(std::int64_t step, std::int64_t epoch, double wall, double first_loss);
  /// Step `step` failed with a CommError `seconds_in` after it began: this worker abandons its
  /// connections, reports, and joins the next generation. True when it takes the step again,
  /// false when it took the source's state and goes on to the next step. Outside a step
  /// (`in_step` false: an admission, the run's end), `step` is the steps completed and nothing
  /// is undone.
  bool recover(std::int64_t step, std::int64_t epoch, double wall, double first_loss, double seconds_in,
               bool in_step = true);
  /// A relaunched worker, admitted (its communicator connected the generation): the source's state.
  ElasticStart join();
  /// Every member after its last step, `steps` of them: a barrier, so that a worker lost in the
  /// last step is recovered from as in any other (those a step behind take the state); then
  /// worker 0 sends relaunched workers still waiting home.
  void finish(std::int64_t steps, std::int64_t epoch, double wall, double first_loss);

 private:
  /// The source sends the members that receive (joiners, those behind) its weights, optimizer and
  /// schedule state, its clock and first loss, and records the bytes it sent (join_bytes at the
  /// generation's step, also when a loss ends the hand-over); every member then checks the
  /// replicas are equal. The state's traffic goes to the next step's exchange
  /// (Trainer::add_hand_over), that of a hand-over a loss ends too.
  void hand_over(const comm::Generation& g, std::int64_t epoch, double wall, double first_loss, ElasticStart* received);
  /// hand_over's transfer: the state received, or sent and its bytes recorded.
  void transfer_state(const comm::Generation& g, std::int64_t epoch, double wall, double first_loss,
                      ElasticStart* received);
  /// What a change cost, in seconds on this worker's wall clock.
  struct ChangeCost {
    double detect = 0;    ///< from the failed step's start to the failure (0 for an admission)
    double regroup = 0;   ///< the reports awaited and the new connections made
    double handover = 0;  ///< the state sent and the replicas checked equal
  };
  /// Worker 0's rows for a generation that begins at its step.
  void record(const comm::Generation& g, std::int64_t epoch, double wall, const ChangeCost& cost);
  /// A generation that begins at `step` connects its members and the source hands its joiners
  /// the state; with `admit_new`, worker 0 first admits the relaunched workers waiting.
  void admit_due(std::int64_t step, std::int64_t epoch, double wall, double first_loss, bool admit_new);
  /// `work` between steps, `steps` of them completed; a loss during it is recovered from (nothing
  /// of a step to undo) and `work` done again by the members that remain.
  void between_steps(std::int64_t steps, std::int64_t epoch, double wall, double first_loss,
                     const std::function<void()>& work);
  /// Puts back the compressor's state begin_step() kept, and with `data_too` the place in the shard.
  void restore_step_start(bool data_too);

  comm::ElasticGroup& group_;
  WorkerParts& parts_;
  Trainer& trainer_;
  comm::Communicator& comm_;
  MetricsSink& sink_;
  std::optional<comm::Generation> forming_;  ///< an admission adopted, not yet recorded
  std::vector<std::uint8_t> compressor_at_start_;
  std::size_t data_at_start_ = 0;
};

}  // namespace laconic::train
