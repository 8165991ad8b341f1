#include "engine/train/trainer.hpp"

#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>

#include "engine/core/compute_gate.hpp"
#include "engine/core/error.hpp"
#include "engine/core/metric_keys.hpp"
#include "engine/core/rank_clock.hpp"
#include "engine/train/data/shard.hpp"
#include "engine/train/models/objective.hpp"
#include "engine/train/optim/outer_step.hpp"
#include "engine/train/step_helpers.hpp"

namespace laconic::train {

Trainer::Trainer(const RunConfig& config, WorkerParts& parts, comm::Communicator& comm)
    : config_(config),
      parts_(parts),
      comm_(comm),
      device_(parts.device),
      params_(parameters_on(*parts.model, parts.device)),  // built on the CPU from the seed, then moved
      gradient_(params_, parts.staged_gradient),
      flat_grad_(gradient_.on_device()),
      exchange_updates_(config.exchange == Exchange::Update || parts.optimizer->brings_codec()) {
  // The last averaged model (every worker's start): what local SGD's averages are taken from.
  read_model(anchor_);
  if (const auto bucketing = parts.topology->overlap()) start_overlap(*bucketing);
  if (parts.schedule->traits().streaming) start_fragments(parts.schedule->traits().fragments);
  if (const auto& outer = parts.schedule->traits().outer_optimizer) outer_lr_ = StepValue::read(*outer, "lr");
}

compress::Compressor& Trainer::compressor() {
  if (overlapped_) return overlapped_->compressors();
  if (fragment_compressors_) return *fragment_compressors_;
  return *parts_.compressor;
}

void Trainer::begin_epoch(std::int64_t epoch) {
  // The workers share the data; parameter servers (ranks after them) hold none.
  const std::int64_t n = parts_.dataset->train().size();
  shard_ = shard_indices(n, config_.workers, comm_.rank(), config_.seed, epoch);
  position_ = 0;
  if (config_.churn_batch != ChurnBatch::Global || !parts_.churn || parts_.churn->name() == "calm") return;
  shards_.clear();
  for (int r = 0; r < config_.workers; ++r)
    shards_.push_back(shard_indices(n, config_.workers, r, config_.seed, epoch));
}

void Trainer::share_step(const std::vector<int>& members, std::int64_t index) {
  skip_to(index);
  shared_.clear();
  loss_weight_ = 1;
  std::vector<std::int64_t> absent;  // the absent workers' examples of the step, rank by rank
  for (int r = 0; r < config_.workers; ++r) {
    if (std::binary_search(members.begin(), members.end(), r)) continue;
    const auto& shard = shards_.at(static_cast<std::size_t>(r));
    const std::size_t begin = std::min(position_, shard.size());
    const std::size_t end = std::min(begin + static_cast<std::size_t>(config_.batch_size), shard.size());
    absent.insert(absent.end(), shard.begin() + static_cast<std::ptrdiff_t>(begin),
                  shard.begin() + static_cast<std::ptrdiff_t>(end));
  }
  if (absent.empty()) return;
  const auto present = static_cast<std::size_t>(members.size());
  const auto me =
      static_cast<std::size_t>(std::lower_bound(members.begin(), members.end(), comm_.rank()) - members.begin());
  for (std::size_t k = me; k < absent.size(); k += present) shared_.push_back(absent[k]);
  // Every shard has as many examples, so each member's own batch is as large as this one's.
  const auto own =
      static_cast<double>(std::min(shard_.size() - position_, static_cast<std::size_t>(config_.batch_size)));
  const double all = own * static_cast<double>(present) + static_cast<double>(absent.size());
  loss_weight_ = (own + static_cast<double>(shared_.size())) * static_cast<double>(present) / all;
}

void Trainer::skip_to(std::int64_t index) {
  position_ = std::min(shard_.size(), static_cast<std::size_t>(index * config_.batch_size));
}

void Trainer::save_state(StateWriter& out) const {
  out.flag(decoded_payloads_recorded_);
  out.array(anchor_);
  out.array(straggler_rng_.state_words());
  if (overlapped_) overlapped_->compressors().save_state(out);
  // diloco, which no older format ran:
  if (fragment_compressors_) fragment_compressors_->save_state(out);
  for (const auto& outer : parts_.outer_optimizers) outer->save_state(out);
  if (parts_.schedule->traits().overlap > 0) save_in_flight(out);
}

void Trainer::load_state(StateReader& in, std::uint64_t checkpoint_format) {
  if (checkpoint_format >= 3) decoded_payloads_recorded_ = in.flag();
  in.array(anchor_);
  in.array_exact(straggler_rng_.state_words());
  if (overlapped_) overlapped_->compressors().load_state(in);  // told their epoch by the first advance() after
  if (fragment_compressors_) fragment_compressors_->load_state(in);
  for (const auto& outer : parts_.outer_optimizers) outer->load_state(in);
  if (parts_.schedule->traits().overlap > 0) load_in_flight(in);
}

void Trainer::save_shared_state(StateWriter& out) const {
  if (parts_.schedule->traits().exchanges_each_gradient) return;
  out.array(anchor_);
  for (const auto& outer : parts_.outer_optimizers) outer->save_state(out);
}

void Trainer::load_shared_state(StateReader& in) {
  if (parts_.schedule->traits().exchanges_each_gradient) return;
  in.array_exact(std::span<float>(anchor_));
  for (const auto& outer : parts_.outer_optimizers) outer->load_state(in);
}

void Trainer::compute_gradients() {
  const ComputeSlot slot;  // thread ranks: as many compute at once as the host has cores
  const auto& data = parts_.dataset->train();
  auto end = std::min<std::size_t>(position_ + static_cast<std::size_t>(config_.batch_size), shard_.size());
  auto index = torch::from_blob(shard_.data() + position_, {static_cast<std::int64_t>(end - position_)}, torch::kInt64);
  if (!shared_.empty())  // churn_batch = "global": its share of the absent workers' examples too
    index = torch::cat(
        {index, torch::from_blob(shared_.data(), {static_cast<std::int64_t>(shared_.size())}, torch::kInt64)});
  examples_ = index.numel();
  position_ = end;
  auto inputs = batch_of(data.inputs.index_select(0, index)).to(device_);
  auto labels = batch_of(data.labels.index_select(0, index)).to(device_);
  flat_grad_.zero_();
  exchange_ = {};  // a step without an exchange sends nothing
  time_overlap_budget_ = -1;
  time_delay_ = 0;
  time_update_ = 0;
  const double t0 = rank_seconds();
  auto loss = training_loss(parts_.model->forward(inputs), labels);
  settle(device_);  // a GPU's queued work done before its phase's clock is read
  time_forward_ = rank_seconds() - t0;
  if (overlapped_) {
    // The straggler's delay holds its gradient back, so it goes before backward: after it,
    // the buckets would already be on their way.
    straggle();
    const double b = rank_seconds();
    overlapped_->begin();
    time_forward_ += rank_seconds() - b;
  }
  const double t1 = rank_seconds();
  if (loss_weight_ != 1) {
    (loss * loss_weight_).backward();  // the members' average is then the step's mean gradient
  } else {
    loss.backward();
  }
  settle(device_);
  time_backward_ = rank_seconds() - t1;
  if (overlapped_) overlapped_->backward_done();
  if (!overlapped_) straggle();
  loss_ = loss.item<double>();
  LACONIC_ENFORCE(params_.front().grad().data_ptr() == flat_grad_.data_ptr(),
                  "backward replaced the gradient buffer instead of writing into it");
}

void Trainer::exchange_gradients() {
  if (overlapped_) {
    exchange_ = overlapped_->finish(parts_.network.get());
    return;
  }
  if (exchange_updates_) {
    // exchange = "update": the optimizer's step on this worker's gradient goes out instead
    // (its momentum and learning rate applied here; the compressor's error feedback then
    // acts on the update).
    const double t0 = rank_seconds();
    clip_gradient();
    parts_.optimizer->compute_update(params_);
    settle(device_);
    time_update_ = rank_seconds() - t0;
  }
  const double staging = to_host();
  exchange_ = parts_.topology->average(gradient_.host(), *parts_.compressor, comm_);
  exchange_.time_compress += staging;
  exchange_.time_decompress += to_device();
}

double Trainer::to_host() {
  if (!gradient_.staged()) return 0;
  const double t0 = rank_seconds();
  gradient_.to_host();
  return rank_seconds() - t0;
}

double Trainer::to_device() {
  if (!gradient_.staged()) return 0;
  const double t0 = rank_seconds();
  gradient_.to_device();
  settle(device_);
  return rank_seconds() - t0;
}

void Trainer::average_gradients_in_island() {
  const double staging = to_host();
  const std::span<float> gradient = gradient_.host();
  const comm::ByteCounters before = comm_.counters();
  const double t0 = rank_seconds();
  const float scale = 1.0f / static_cast<float>(comm_.allreduce_sum_island(gradient));
  for (float& g : gradient) g *= scale;
  exchange_.time_communicate = rank_seconds() - t0;
  exchange_.time_compress = staging;
  exchange_.time_decompress = to_device();
  exchange_.traffic = comm_.counters().since(before);
  exchange_.bytes_sent = exchange_.bytes_dense = exchange_.traffic.sent;
  exchange_.bytes_received = exchange_.traffic.received;
}

namespace {

// The round's outer exchange, with the island's inner average of the same step added before it
// (diloco { islands = true }): one step, both exchanges' time and traffic.
void add_inner_exchange(topology::ExchangeStats& outer, const topology::ExchangeStats& inner) {
  outer.time_communicate += inner.time_communicate;
  outer.bytes_sent += inner.bytes_sent;
  outer.bytes_received += inner.bytes_received;
  outer.bytes_dense += inner.bytes_dense;
  outer.traffic += inner.traffic;
}

}  // namespace

void Trainer::average_models(const StepPoint& at) {
  const topology::ExchangeStats inner = exchange_;  // the island's average of this step, if any
  average_models_across(at);
  if (parts_.schedule->traits().synchronous_islands) add_inner_exchange(exchange_, inner);
}

void Trainer::average_models_across(const StepPoint& at) {
  read_model(model_);
  if (parts_.topology->mixes_models()) {
    exchange_ = parts_.topology->average(model_, *parts_.compressor, comm_);
  } else {
    // Average the change since the last average, so that a compressor (with its error
    // feedback) sees something gradient-like, then start the next period from the mean.
    for (std::size_t i = 0; i < model_.size(); ++i) model_[i] -= anchor_[i];
    exchange_ = parts_.topology->average(model_, *parts_.compressor, comm_);
    if (!parts_.outer_optimizers.empty()) {
      step_outer(at);
    } else {
      for (std::size_t i = 0; i < model_.size(); ++i) model_[i] += anchor_[i];
      anchor_ = model_;
    }
  }
  write_model(model_);
}

void Trainer::apply_update() {
  apply_local_update();
  count_compute_in_flight();
}

void Trainer::apply_local_update() {
  const ComputeSlot slot;
  const double t0 = rank_seconds();
  if (parts_.topology->pulls_weights()) {
    // The server stepped its optimizer; what came back is the change of its weights.
    torch::NoGradGuard no_grad;
    std::int64_t offset = 0;
    for (auto& p : params_) {
      p.add_(flat_grad_.narrow(0, offset, p.numel()).view_as(p));
      offset += p.numel();
    }
    settle(device_);
    time_optimizer_ = rank_seconds() - t0;
    return;
  }
  if (exchange_updates_) {
    // The workers' mean update: the optimizer acted before the exchange (DeMo's sign step after).
    parts_.optimizer->apply_exchanged(params_);
    settle(device_);
    time_optimizer_ = time_update_ + rank_seconds() - t0;
    return;
  }
  clip_gradient();
  parts_.optimizer->step(params_);
  settle(device_);
  time_optimizer_ = rank_seconds() - t0;
}

void Trainer::clip_gradient() {
  if (config_.clip_norm > 0) clip_to_norm(flat_grad_, config_.clip_norm);
}

double Trainer::step_seconds(double step_time) const {
  if (rank_clock() != RankClockKind::ThreadCpu) return step_time;
  // A thread rank's step: what it computed and compressed on its thread's CPU, its wait for what
  // it received (derived from the senders' clocks, whatever the topology or schedule), a
  // straggler's delay, and the communication projected onto the link in place of the CPU its
  // collectives used.
  return step_time - exchange_.time_communicate + phase_waited() + time_delay_ +
         projected_communicate(exchange_, parts_.network.get());
}

void Trainer::add_hand_over(const comm::ByteCounters& traffic, double seconds) {
  hand_over_traffic_ += traffic;
  hand_over_seconds_ += seconds;
}

double Trainer::take_hand_over() {
  const double seconds = hand_over_seconds_;
  const comm::ByteCounters traffic = hand_over_traffic_;
  hand_over_traffic_ = {};
  hand_over_seconds_ = 0;
  if (traffic.messages == 0) return seconds;
  exchange_.traffic += traffic;
  exchange_.bytes_sent += traffic.sent;
  exchange_.bytes_received += traffic.received;
  exchange_.bytes_dense += traffic.sent;  // the state goes uncompressed whatever the compressor
  exchange_.time_communicate += seconds;
  if (exchange_.projected_time_communicate && parts_.network)
    *exchange_.projected_time_communicate += parts_.network->project(traffic);
  return seconds;
}

void Trainer::record_step(MetricsSink& sink, std::int64_t step, std::int64_t epoch, double wall, double seconds) {
  const PutMetric put = [&](const char* key, double value) {
    sink.record({key, step, epoch, comm_.rank(), wall, value});
  };
  put(keys::kTrainLoss, loss_);
  if (parts_.churn && parts_.churn->name() != "calm") put(keys::kExamples, static_cast<double>(examples_));
  put(keys::kTimeForward, time_forward_);
  put(keys::kTimeBackward, time_backward_);
  // Projected, never measured: this step's messages on the experiment's link, in place of
  // the measured time inside collectives.
  const RecordedCommunication recorded = record_exchange(put, exchange_, parts_.network.get());
  // A thread rank that exchanged records its derived wait, whatever its topology.
  const bool derived_wait = rank_clock() == RankClockKind::ThreadCpu && exchange_.traffic.messages > 0;
  if (exchange_.measured_wait || derived_wait)
    put(keys::kTimeWait, derived_wait ? phase_waited() : exchange_.time_wait);
  if (exchange_.overlapped) put(keys::kTimeOverlapped, exchange_.time_overlapped);
  if (time_overlap_budget_ >= 0) put(keys::kTimeOverlapBudget, time_overlap_budget_);
  put(keys::kTimeOptimizer, time_optimizer_);
  put(keys::kLr, parts_.optimizer->lr());
  if (parts_.stragglers.delay > 0) put(keys::kTimeDelay, time_delay_);
  put(keys::kTimeStep, seconds);
  put(keys::kPayloadBytes, static_cast<double>(exchange_.payload_bytes));
  // What projecting onto another link later needs (laconic report --link).
  put(keys::kMessages, static_cast<double>(exchange_.traffic.messages));
  put(keys::kLinkBytes, static_cast<double>(exchange_.traffic.link_bytes));
  if (!comm_.islands().empty()) {
    put(keys::kBetweenMessages, static_cast<double>(exchange_.traffic.between_messages));
    put(keys::kBetweenLinkBytes, static_cast<double>(exchange_.traffic.between_link_bytes));
    put(keys::kBetweenSharedBytes, static_cast<double>(exchange_.traffic.between_shared_bytes));
  }
  if (parts_.network) put(keys::kProjectedTimeStep, seconds - recorded.communicate + recorded.projected);
  if (comm_.rank() == 0 && !decoded_payloads_recorded_ && exchange_.payload_bytes > 0) {
    put(keys::kDecodedPayloads, exchange_.decoded_payloads);  // what a hardware profile's decoding multiplies
    decoded_payloads_recorded_ = true;
  }
}

double Trainer::consensus_distance() {
  read_model(model_);
  std::vector<float> mean = model_;
  comm_.allreduce_sum(mean);
  double squared = 0;
  for (std::size_t i = 0; i < model_.size(); ++i) {
    const double d = model_[i] - mean[i] / comm_.size();
    squared += d * d;
  }
  std::vector<float> total = {static_cast<float>(squared)};
  comm_.allreduce_sum(total);
  return std::sqrt(static_cast<double>(total[0]) / comm_.size());
}

void Trainer::read_model(std::vector<float>& out) const {
  out.resize(static_cast<std::size_t>(flat_grad_.numel()));
  std::size_t offset = 0;
  for (const auto& p : params_) {
    const auto c = host_copy(p.detach());
    std::memcpy(out.data() + offset, c.data_ptr<float>(), static_cast<std::size_t>(c.numel()) * sizeof(float));
    offset += static_cast<std::size_t>(c.numel());
  }
}

void Trainer::write_model(const std::vector<float>& in) {
  torch::NoGradGuard no_grad;
  std::size_t offset = 0;
  for (auto& p : params_) {
    auto source = torch::from_blob(const_cast<float*>(in.data() + offset), p.sizes(), torch::kFloat);
    p.copy_(source);
    offset += static_cast<std::size_t>(p.numel());
  }
}

void Trainer::straggle() {
  if (parts_.stragglers.delay > 0 && parts_.stragglers.slows(comm_.rank(), config_.workers)) {
    const double spread = parts_.stragglers.jitter * (2.0 * straggler_rng_.uniform() - 1.0);
    time_delay_ = parts_.stragglers.delay * (1.0 + spread);
    std::this_thread::sleep_for(std::chrono::duration<double>(time_delay_));
    add_step_compute(time_delay_);  // it stands for compute the straggler does
  }
}

void Trainer::start_overlap(const topology::Bucketing& bucketing) {
  LACONIC_ENFORCE(!gradient_.staged(), "an overlapped exchange reads the gradient where backward writes it");
  std::vector<compress::LayerShape> shapes;
  std::vector<std::size_t> sizes;
  for (const auto& p : params_) {
    shapes.emplace_back(p.sizes().begin(), p.sizes().end());
    sizes.push_back(static_cast<std::size_t>(p.numel()));
  }
  const auto seed = static_cast<std::uint64_t>(config_.seed);
  const int rank = comm_.rank();
  auto make = [&](std::size_t first, std::size_t end, std::size_t bucket) {
    return parts_.compressor_for_layers(
        {shapes.begin() + static_cast<std::ptrdiff_t>(first), shapes.begin() + static_cast<std::ptrdiff_t>(end)},
        {compress::derive_seed(seed, compress::streams::kBucket + bucket), rank});
  };
  overlapped_ = std::make_unique<topology::BucketedExchange>(
      std::span<float>(flat_grad_.data_ptr<float>(), static_cast<std::size_t>(flat_grad_.numel())), sizes, bucketing,
      make, comm_, bucketing.algorithm);
  hooks_ = std::make_unique<GradientReadyHooks>(
      params_, [exchange = overlapped_.get()](std::size_t i) { exchange->layer_ready(i); });
}

}  // namespace laconic::train
