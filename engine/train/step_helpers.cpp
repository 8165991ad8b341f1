#include "engine/train/step_helpers.hpp"

#include "engine/core/metric_keys.hpp"
#include "engine/core/rank_clock.hpp"

namespace laconic::train {

torch::Tensor attach_flat_gradient(std::vector<torch::Tensor>& params) {
  std::int64_t total = 0;
  for (const auto& p : params) total += p.numel();
  const torch::Device device = params.empty() ? torch::Device(torch::kCPU) : params.front().device();
  torch::Tensor flat = torch::zeros({total}, torch::TensorOptions().dtype(torch::kFloat).device(device));
  std::int64_t offset = 0;
  for (auto& p : params) {
    p.mutable_grad() = flat.narrow(0, offset, p.numel()).view_as(p);
    offset += p.numel();
  }
  return flat;
}

void clip_to_norm(torch::Tensor& gradient, double max_norm) {
  const double scale = max_norm / (gradient.norm().item<double>() + 1e-6);
  if (scale < 1) gradient.mul_(scale);
}

void set_learning_rate(WorkerParts& parts, RunCallbacks* callbacks, const RunConfig& config, std::int64_t step,
                       std::int64_t epoch, std::int64_t steps_per_epoch) {
  if (callbacks != nullptr && callbacks->has("lr_schedule"))
    parts.optimizer->set_lr(callbacks->learning_rate(epoch, step));
  else if (parts.lr_schedule)
    parts.optimizer->set_lr_factor(lr_factor(*parts.lr_schedule, parts.lr_schedule_spec,
                                             {step, epoch, steps_per_epoch, config.epochs, config.workers}));
}

double projected_communicate(const topology::ExchangeStats& stats, const comm::NetworkModel* network) {
  if (network == nullptr) return 0;
  return stats.projected_time_communicate ? *stats.projected_time_communicate : network->project(stats.traffic);
}

RecordedCommunication record_exchange(const PutMetric& put, const topology::ExchangeStats& stats,
                                      const comm::NetworkModel* network) {
  put(keys::kTimeCompress, stats.time_compress);
  put(keys::kTimeDecompress, stats.time_decompress);
  put(keys::kBytesSent, static_cast<double>(stats.bytes_sent));
  put(keys::kBytesReceived, static_cast<double>(stats.bytes_received));
  put(keys::kBytesDense, static_cast<double>(stats.bytes_dense));
  const double projected = projected_communicate(stats, network);
  const double communicate = rank_clock() == RankClockKind::ThreadCpu ? projected : stats.time_communicate;
  put(keys::kTimeCommunicate, communicate);
  if (network != nullptr) put(keys::kProjectedTimeCommunicate, projected);
  return {projected, communicate};
}

}  // namespace laconic::train
