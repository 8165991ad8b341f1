#include "engine/compress/powersgd.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "engine/core/error.hpp"

namespace laconic::compress {

OptionFields<PowerSgdOptions> PowerSgdOptions::fields() {
  using O = PowerSgdOptions;
  return OptionFields<O>()
      .integer("rank", &O::rank, "rank r of each layer's approximation", closed(1, 1024))
      .flag("warm_start", &O::warm_start,
            "start each step's power iteration from the last step's Q (else a fresh random Q)")
      .integer("start_iter", &O::start_iter, "steps exchanged dense (fp32 mean) before compression starts", at_least(0))
      .flag("error_feedback", &O::error_feedback, "keep M - P Q^T and add it to the next gradient");
}

namespace {

struct Matrix {
  std::size_t rows, cols;
};

Matrix matrix_of(const LayerShape& shape) {
  if (shape.size() < 2) {
    std::size_t n = 1;
    for (std::size_t d : shape) n *= d;
    return {n, 1};
  }
  std::size_t cols = 1;
  for (std::size_t i = 1; i < shape.size(); ++i) cols *= shape[i];
  return {shape[0], cols};
}

bool worth_compressing(Matrix m, std::size_t rank) {
  return m.rows > 1 && m.cols > 1 && (m.rows + m.cols) * rank < m.rows * m.cols;
}

/// out (rows x r) = m (rows x cols) * q (cols x r), all row-major.
void multiply(const float* m, std::size_t rows, std::size_t cols, const float* q, std::size_t r, float* out) {
  std::fill(out, out + rows * r, 0.0f);
  for (std::size_t i = 0; i < rows; ++i) {
    float* o = out + i * r;
    const float* row = m + i * cols;
    for (std::size_t k = 0; k < cols; ++k) {
      const float a = row[k];
      const float* qk = q + k * r;
      for (std::size_t j = 0; j < r; ++j) o[j] += a * qk[j];
    }
  }
}

/// out (cols x r) = m^T (cols x rows) * p (rows x r).
void multiply_transposed(const float* m, std::size_t rows, std::size_t cols, const float* p, std::size_t r,
                         float* out) {
  std::fill(out, out + cols * r, 0.0f);
  for (std::size_t i = 0; i < rows; ++i) {
    const float* row = m + i * cols;
    const float* pi = p + i * r;
    for (std::size_t k = 0; k < cols; ++k) {
      const float a = row[k];
      float* o = out + k * r;
      for (std::size_t j = 0; j < r; ++j) o[j] += a * pi[j];
    }
  }
}

/// Gram-Schmidt on the r columns of p (rows x r, row-major), sums in double. A column that is
/// (numerically) in the span of the previous ones becomes zero.
void orthogonalize(float* p, std::size_t rows, std::size_t r) {
  for (std::size_t j = 0; j < r; ++j) {
    for (std::size_t k = 0; k < j; ++k) {
      double dot = 0;
      for (std::size_t i = 0; i < rows; ++i) dot += static_cast<double>(p[i * r + j]) * p[i * r + k];
      for (std::size_t i = 0; i < rows; ++i) p[i * r + j] -= static_cast<float>(dot) * p[i * r + k];
    }
    double norm = 0;
    for (std::size_t i = 0; i < rows; ++i) norm += static_cast<double>(p[i * r + j]) * p[i * r + j];
    norm = std::sqrt(norm);
    const float scale = norm > 1e-30 ? static_cast<float>(1.0 / norm) : 0.0f;
    for (std::size_t i = 0; i < rows; ++i) p[i * r + j] *= scale;
  }
}

}  // namespace

std::size_t powersgd_floats(const std::vector<LayerShape>& shapes, std::size_t rank) {
  std::size_t floats = 0;
  for (const LayerShape& shape : shapes) {
    const Matrix m = matrix_of(shape);
    floats += worth_compressing(m, rank) ? (m.rows + m.cols) * rank : m.rows * m.cols;
  }
  return floats;
}

void PowerSgdCompressor::set_seed(std::uint64_t run_seed, int rank) {
  (void)rank;  // Q must be the same on every worker
  seed_ = derive_seed(run_seed, streams::kPowerSgd);
  q_ready_ = false;
}

void PowerSgdCompressor::save_state(StateWriter& out) const {
  out.i64(step_);
  out.flag(q_ready_);
  out.array(q_);
  out.array(residual_);
}

void PowerSgdCompressor::load_state(StateReader& in) {
  step_ = in.i64();
  const bool q_ready = in.flag();
  std::vector<float> q;
  in.array(q);
  in.array(residual_);
  // plan() sizes q_ on the next exchange and would discard it: plan now (the shapes are set),
  // then restore Q.
  std::size_t total = 0;
  for (const LayerShape& shape : shapes_) {
    std::size_t size = 1;
    for (std::size_t d : shape) size *= d;
    total += size;
  }
  plan(residual_.empty() ? total : residual_.size());
  if (q.empty()) return;  // saved before the first compressed step
  LACONIC_ENFORCE(q.size() == q_.size(), "powersgd state holds Q of ", q.size(), " floats, these layers need ",
                  q_.size());
  q_ = std::move(q);
  q_ready_ = q_ready;
}

void PowerSgdCompressor::set_layer_shapes(const std::vector<LayerShape>& shapes) {
  shapes_ = shapes;
  layers_.clear();
}

void PowerSgdCompressor::plan(std::size_t total) {
  layers_.clear();
  // Without shapes the gradient is one vector, sent dense.
  const std::vector<LayerShape> shapes = shapes_.empty() ? std::vector<LayerShape>{{total}} : shapes_;
  const auto r = static_cast<std::size_t>(options_.rank);
  std::size_t offset = 0, p_floats = 0, q_floats = 0;
  for (const LayerShape& shape : shapes) {
    const Matrix m = matrix_of(shape);
    Layer layer{offset, m.rows, m.cols, worth_compressing(m, r), 0, 0};
    if (layer.low_rank) {
      layer.p_offset = p_floats;
      layer.q_offset = q_floats;
      p_floats += m.rows * r;
      q_floats += m.cols * r;
    }
    offset += m.rows * m.cols;
    layers_.push_back(layer);
  }
  LACONIC_ENFORCE(offset == total, "powersgd layer shapes cover ", offset, " elements, the gradient has ", total);
  dense_floats_ = 0;
  for (Layer& layer : layers_)
    if (!layer.low_rank) {
      layer.p_offset = p_floats + dense_floats_;  // dense values follow the P matrices
      dense_floats_ += layer.rows * layer.cols;
    }
  p_.assign(p_floats + dense_floats_, 0.0f);
  q_.assign(q_floats, 0.0f);
  q_ready_ = false;
}

void PowerSgdCompressor::draw_q(std::uint64_t stream) {
  Rng rng(derive_seed(seed_, stream));
  // Standard normal by Box-Muller; any full-rank Q works, Gaussian is the paper's choice.
  for (std::size_t i = 0; i < q_.size(); i += 2) {
    const double u1 = (static_cast<double>(rng.next() >> 11) + 1.0) * 0x1.0p-53;  // (0, 1]
    const double u2 = static_cast<double>(rng.next() >> 11) * 0x1.0p-53;
    const double radius = std::sqrt(-2.0 * std::log(u1));
    q_[i] = static_cast<float>(radius * std::cos(2 * std::numbers::pi * u2));
    if (i + 1 < q_.size()) q_[i + 1] = static_cast<float>(radius * std::sin(2 * std::numbers::pi * u2));
  }
  q_ready_ = true;
}

std::size_t PowerSgdCompressor::exchange(std::span<float> gradient, SumReducer& reducer) {
  const float mean = 1.0f / static_cast<float>(reducer.workers());
  const std::int64_t step = step_++;
  if (step < options_.start_iter) {
    reducer.sum(gradient);
    for (float& g : gradient) g *= mean;
    return gradient.size() * sizeof(float);
  }
  if (layers_.empty() || layers_.back().offset + layers_.back().rows * layers_.back().cols != gradient.size())
    plan(gradient.size());
  if (!options_.warm_start || !q_ready_) draw_q(static_cast<std::uint64_t>(step));

  // M: the gradient plus the residual (in the residual's buffer), or the gradient itself.
  float* m = gradient.data();
  if (options_.error_feedback) {
    if (residual_.size() != gradient.size()) residual_.assign(gradient.size(), 0.0f);
    for (std::size_t i = 0; i < gradient.size(); ++i) residual_[i] += gradient[i];
    m = residual_.data();
  }
  const auto r = static_cast<std::size_t>(options_.rank);

  // Round 1: P = M Q for every low-rank layer, the dense layers' values after them.
  for (const Layer& l : layers_) {
    if (l.low_rank)
      multiply(m + l.offset, l.rows, l.cols, q_.data() + l.q_offset, r, p_.data() + l.p_offset);
    else
      std::copy_n(m + l.offset, l.rows * l.cols, p_.data() + l.p_offset);
  }
  reducer.sum(p_);
  for (float& v : p_) v *= mean;

  // Round 2: Q = M^T orthogonalize(P).
  for (const Layer& l : layers_) {
    if (!l.low_rank) continue;
    orthogonalize(p_.data() + l.p_offset, l.rows, r);
    multiply_transposed(m + l.offset, l.rows, l.cols, p_.data() + l.p_offset, r, q_.data() + l.q_offset);
  }
  reducer.sum(q_);
  for (float& v : q_) v *= mean;

  // The update P Q^T (low-rank layers) or the mean (dense ones); the residual keeps M - update.
  for (const Layer& l : layers_) {
    float* out = gradient.data() + l.offset;
    if (l.low_rank) {
      const float* p = p_.data() + l.p_offset;
      const float* q = q_.data() + l.q_offset;
      for (std::size_t i = 0; i < l.rows; ++i)
        for (std::size_t k = 0; k < l.cols; ++k) {
          float sum = 0;
          for (std::size_t j = 0; j < r; ++j) sum += p[i * r + j] * q[k * r + j];
          out[i * l.cols + k] = sum;
        }
    } else {
      std::copy_n(p_.data() + l.p_offset, l.rows * l.cols, out);
    }
    if (!options_.error_feedback) continue;
    float* residual = residual_.data() + l.offset;
    if (l.low_rank)
      for (std::size_t i = 0; i < l.rows * l.cols; ++i) residual[i] -= out[i];
    else
      std::fill_n(residual, l.rows * l.cols, 0.0f);  // sent exactly
  }
  return (p_.size() + q_.size()) * sizeof(float);
}

}  // namespace laconic::compress
