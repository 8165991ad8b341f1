#pragma once
#include <cstdint>
#include <vector>

#include "engine/compress/compressor.hpp"
#include "engine/compress/random.hpp"
#include "engine/core/option_fields.hpp"

namespace laconic::compress {

struct PowerSgdOptions {
  std::int64_t rank = 2;
  bool warm_start = true;
  std::int64_t start_iter = 0;
  bool error_feedback = true;

  static OptionFields<PowerSgdOptions> fields();
  /// Two collectives per step: a MultiRoundCompressor.
  static CompressorTraits traits(const PowerSgdOptions&) { return {.multi_round = true}; }
};

/// Floats a worker contributes per step for layers of `shapes` at rank r: for each layer seen as
/// an n x m matrix (n = first dimension, m = the product of the rest) that is worth compressing
/// ((n + m) * r < n * m), n*r for P and m*r for Q; every other layer n*m, sent dense.
std::size_t powersgd_floats(const std::vector<LayerShape>& shapes, std::size_t rank);

/// PowerSGD (Vogels, Karimireddy & Jaggi 2019, Algorithm 1): one step of subspace iteration per
/// training step. For each matrix-shaped layer M (plus the residual with error feedback):
/// P = M Q; P = allreduce-mean(P); P = orthogonalize(P); Q = M^T P; Q = allreduce-mean(Q); the
/// update is P Q^T and the residual M - P Q^T. All layers' P go in one collective together with
/// the dense layers, all Q in a second. Q starts as the same random Gaussian matrix on every
/// worker (from the run seed) and, with warm_start, carries over to the next step.
///
/// Needs two collectives per step, so it is a MultiRoundCompressor (exchange()).
class PowerSgdCompressor : public MultiRoundCompressor {
 public:
  explicit PowerSgdCompressor(PowerSgdOptions options) : options_(options) {}

  std::string name() const override { return "powersgd"; }
  Capabilities capabilities() const override { return {.summable = true, .separable_by_layer = true}; }
  void set_seed(std::uint64_t run_seed, int rank) override;
  void set_layer_shapes(const std::vector<LayerShape>& shapes) override;
  std::size_t exchange(std::span<float> gradient, SumReducer& reducer) override;
  void save_state(StateWriter& out) const override;
  void load_state(StateReader& in) override;

  /// What error feedback holds back (empty before the first compressed step).
  std::span<const float> residual() const { return residual_; }

 private:
  struct Layer {
    std::size_t offset = 0;  // in the flat gradient
    std::size_t rows = 0, cols = 0;
    bool low_rank = false;
    std::size_t p_offset = 0, q_offset = 0;  // in p_ / q_ (low-rank layers)
  };

  void plan(std::size_t total);
  void draw_q(std::uint64_t stream);

  PowerSgdOptions options_;
  std::vector<LayerShape> shapes_;
  std::vector<Layer> layers_;
  std::size_t dense_floats_ = 0;  // elements of the layers sent dense
  std::uint64_t seed_ = 0;        // shared by all workers
  std::int64_t step_ = 0;
  bool q_ready_ = false;
  std::vector<float> residual_;
  std::vector<float> p_;  // all layers' P, then the dense layers' values
  std::vector<float> q_;  // all layers' Q
};

}  // namespace laconic::compress
