#pragma once
// What a worker and a parameter server do alike around a step: the flat gradient buffer their
// parameters' gradients live in, the learning rate of a step, and the exchange's measurements.
#include <functional>
#include <vector>

#include <torch/torch.h>

#include "engine/comm/network.hpp"
#include "engine/core/callbacks.hpp"
#include "engine/topology/topology.hpp"
#include "engine/train/worker.hpp"

namespace laconic::train {

/// Makes each parameter's .grad() a view into one flat buffer on the parameters' device, in
/// order, and returns the buffer: backward writes there, and on the CPU the topology exchanges it
/// without a copy (StagedGradient, on_device.hpp).
torch::Tensor attach_flat_gradient(std::vector<torch::Tensor>& params);

/// Scales `gradient` (one flat buffer) by max_norm / (its L2 norm + 1e-6) when that is below 1:
/// torch.nn.utils.clip_grad_norm_'s rule, over every parameter at once (the run's clip_norm).
void clip_to_norm(torch::Tensor& gradient, double max_norm);

/// Sets the optimizer's rate for global step `step` of epoch `epoch`: the experiment file's
/// lr_schedule function when it has one, else the run's lr_schedule component (none: unchanged).
void set_learning_rate(WorkerParts& parts, RunCallbacks* callbacks, const RunConfig& config, std::int64_t step,
                       std::int64_t epoch, std::int64_t steps_per_epoch);

using PutMetric = std::function<void(const char* key, double value)>;

/// The exchange's messages on the run's link (the overlapped exchange's own replay where it has
/// one); 0 without a network model.
double projected_communicate(const topology::ExchangeStats& stats, const comm::NetworkModel* network);

/// What record_exchange() recorded of the communication, in seconds.
struct RecordedCommunication {
  double projected = 0;    ///< projected_communicate(): 0 without a network model
  double communicate = 0;  ///< its time_communicate: measured, or a thread rank's projection
};

/// Records what every exchange measures (docs/schema.md): the times of compressing,
/// decompressing and communicating, the bytes sent, received and of the dense equivalent, and,
/// with a network model, the projected communication time. A thread rank's collectives ran in
/// memory, on a core it shared: its time_communicate is the projection
/// (engine/core/rank_clock.hpp).
RecordedCommunication record_exchange(const PutMetric& put, const topology::ExchangeStats& stats,
                                      const comm::NetworkModel* network);

}  // namespace laconic::train
