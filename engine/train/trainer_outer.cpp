// DiLoCo's half of the Trainer: the outer step on the shared weights, Streaming DiLoCo's
// fragments, and an exchange that overlaps inner steps (engine/schedule/diloco.hpp says when).
#include <algorithm>

#include "engine/core/error.hpp"
#include "engine/core/rank_clock.hpp"
#include "engine/train/optim/outer_step.hpp"
#include "engine/train/trainer.hpp"

namespace laconic::train {

void Trainer::set_outer_lr(Optimizer& outer, const StepPoint& at) const {
  if (!outer_lr_.varies()) return;
  const double lr = outer_lr_.at(at);
  if (!(lr > 0))
    throw ConfigError(str_cat("diloco.outer.lr (a function) returned ", lr, " at epoch ", at.epoch, ", step ", at.step,
                              "; it must be > 0"));
  outer.set_lr(lr);
}

void Trainer::step_outer(const StepPoint& at) {
  const double t0 = rank_seconds();
  set_outer_lr(*parts_.outer_optimizers.front(), at);
  outer_step(*parts_.outer_optimizers.front(), anchor_, model_, params_);
  model_ = anchor_;
  time_optimizer_ += rank_seconds() - t0;
}

std::span<float> Trainer::fragment_of(std::vector<float>& flat, int fragment) const {
  const auto f = static_cast<std::size_t>(fragment);
  const std::size_t first = layer_offsets_[fragment_bounds_[f]], end = layer_offsets_[fragment_bounds_[f + 1]];
  return {flat.data() + first, end - first};
}

void Trainer::average_fragment(int fragment, int fragments, const StepPoint& at) {
  LACONIC_ENFORCE(fragment_compressors_ && fragment_compressors_->size() == static_cast<std::size_t>(fragments),
                  "fragment ", fragment, " of ", fragments, " asked of a trainer started with ",
                  fragment_compressors_ ? fragment_compressors_->size() : 1, " fragments");
  const auto f = static_cast<std::size_t>(fragment);
  read_model(model_);
  const std::span<float> change = fragment_of(model_, fragment), shared = fragment_of(anchor_, fragment);
  for (std::size_t i = 0; i < change.size(); ++i) change[i] -= shared[i];
  exchange_ = parts_.topology->average(change, (*fragment_compressors_)[f], comm_);
  const double t0 = rank_seconds();
  const std::vector<torch::Tensor> layout(params_.begin() + static_cast<std::ptrdiff_t>(fragment_bounds_[f]),
                                          params_.begin() + static_cast<std::ptrdiff_t>(fragment_bounds_[f + 1]));
  set_outer_lr(*parts_.outer_optimizers[f], at);
  outer_step(*parts_.outer_optimizers[f], shared, change, layout);
  time_optimizer_ += rank_seconds() - t0;
  if (parts_.schedule->traits().overlap > 0) {
    // In flight: its communication is charged when it is applied, less what the steps before
    // then computed (nothing of it on this step's projected time).
    in_flight_[f] = {.pending = true, .traffic = exchange_.traffic, .compute = 0};
    exchange_.projected_time_communicate = 0.0;
  }
}

void Trainer::apply_fragment(int fragment, double alpha) {
  const double t0 = rank_seconds();
  read_model(model_);
  const std::span<float> local = fragment_of(model_, fragment), shared = fragment_of(anchor_, fragment);
  if (alpha == 0)
    std::copy(shared.begin(), shared.end(), local.begin());
  else
    for (std::size_t i = 0; i < local.size(); ++i)
      local[i] = static_cast<float>(alpha * local[i] + (1 - alpha) * shared[i]);
  write_model(model_);
  time_optimizer_ += rank_seconds() - t0;
  InFlight& flight = in_flight_[static_cast<std::size_t>(fragment)];
  if (!flight.pending) return;
  land_overlapped(flight);
  flight = {};
}

void Trainer::land_overlapped(const InFlight& flight) {
  // The exchange ran under the inner steps since it began: on the modelled link, only its part
  // beyond their compute shows on this step.
  time_overlap_budget_ = flight.compute;
  exchange_.overlapped = true;
  if (const comm::NetworkModel* network = parts_.network.get()) {
    const double whole = network->project(flight.traffic);
    const double visible = std::max(0.0, whole - flight.compute);
    exchange_.projected_time_communicate = visible;
    exchange_.time_overlapped = whole - visible;
  }
}

void Trainer::count_compute_in_flight() {
  const double compute = time_forward_ + time_backward_ + time_optimizer_ + time_delay_;
  for (InFlight& flight : in_flight_)
    if (flight.pending) flight.compute += compute;
}

void Trainer::start_fragments(std::int64_t fragments) {
  std::vector<std::int64_t> sizes;
  std::vector<compress::LayerShape> shapes;
  layer_offsets_ = {0};
  for (const auto& p : params_) {
    sizes.push_back(p.numel());
    shapes.emplace_back(p.sizes().begin(), p.sizes().end());
    layer_offsets_.push_back(layer_offsets_.back() + static_cast<std::size_t>(p.numel()));
  }
  fragment_bounds_ = fragment_bounds(sizes, fragments);
  std::vector<std::unique_ptr<compress::Compressor>> members;
  for (std::size_t f = 0; f + 1 < fragment_bounds_.size(); ++f)
    members.push_back(parts_.compressor_for_layers(
        {shapes.begin() + static_cast<std::ptrdiff_t>(fragment_bounds_[f]),
         shapes.begin() + static_cast<std::ptrdiff_t>(fragment_bounds_[f + 1])},
        {compress::derive_seed(static_cast<std::uint64_t>(config_.seed), compress::streams::kFragment + f),
         comm_.rank()}));
  fragment_compressors_ = std::make_unique<compress::CompressorGroup>(std::move(members));
  in_flight_.assign(static_cast<std::size_t>(fragments), {});
}

void Trainer::save_in_flight(StateWriter& out) const {
  for (const InFlight& flight : in_flight_) {
    out.flag(flight.pending);
    for (std::uint64_t n : {flight.traffic.sent, flight.traffic.received, flight.traffic.messages,
                            flight.traffic.link_bytes})
      out.u64(n);
    out.f64(flight.compute);
  }
}

void Trainer::load_in_flight(StateReader& in) {
  for (InFlight& flight : in_flight_) {
    flight.pending = in.flag();
    for (std::uint64_t* n : {&flight.traffic.sent, &flight.traffic.received, &flight.traffic.messages,
                             &flight.traffic.link_bytes})
      *n = in.u64();
    flight.compute = in.f64();
  }
}

}  // namespace laconic::train
