#include "engine/compress/chain.hpp"

#include <cstring>

#include "engine/compress/builtin.hpp"
#include "engine/compress/random.hpp"
#include "engine/core/error.hpp"

namespace laconic::compress {

namespace {

/// A child with its own error feedback switched off (when the chain feeds back its whole
/// error, a child doing it too would feed the same error back twice).
ComponentSpec without_feedback(ComponentSpec child) {
  if (child.fields.count("error_feedback")) child.fields["error_feedback"] = false;
  return child;
}

}  // namespace

OptionFields<ChainOptions> ChainOptions::fields() {
  using O = ChainOptions;
  return OptionFields<O>()
      .component("first", &O::first, "the sparsifier: topk, randomk, block_randomk, threshold or dgc")
      .component("second", &O::second, "the compressor applied to the values `first` keeps (e.g. qsgd, fp16, uniform)")
      .flag("error_feedback", &O::error_feedback,
            "feed back what the whole chain drops; switches the children's own error_feedback off")
      .rule([](const ComponentSpec&, O& o) {
        if (o.error_feedback) {  // as normalize() does, for specs that did not go through resolve()
          o.first = without_feedback(o.first);
          o.second = without_feedback(o.second);
        }
        ChainCodec check(o.first, o.second);  // the kinds of children are known once built
      });
}

void ChainOptions::normalize(ComponentSpec& spec) {
  if (!spec.flag("error_feedback")) return;
  for (const char* child : {"first", "second"}) spec.fields[child] = nested(without_feedback(spec.component(child)));
}

ChainCodec::ChainCodec(const ComponentSpec& first, const ComponentSpec& second) {
  const Registry<Compressor> registry = builtin_compressors();
  first_ = registry.create(first);
  second_ = registry.create(second);
  if (first_->exchanges_itself() || second_->exchanges_itself())
    throw ConfigError(str_cat("chain cannot hold ", first_->exchanges_itself() ? first.name : second.name,
                              ": it runs its own collectives"));
  if (!first_->summable() && !first_->sparse_pairs())
    throw ConfigError(
        str_cat("chain.first must be a sparsifier whose values can be compressed further (topk, "
                "threshold, dgc, randomk, block_randomk), got ",
                first.name));
}

void ChainCodec::compress(std::span<const float> gradient, Payload& payload) {
  first_->compress(gradient, inner_);
  if (first_->summable()) {
    last_count_ = inner_.size() / sizeof(float);
    values_.resize(last_count_);
    std::memcpy(values_.data(), inner_.data(), last_count_ * sizeof(float));
    payload.clear();
    if (last_count_ > 0) second_->compress(values_, payload);
    return;
  }
  std::uint32_t header[2];
  LACONIC_ENFORCE(inner_.size() >= sizeof header, "chain.first sent ", inner_.size(), " bytes");
  std::memcpy(header, inner_.data(), sizeof header);
  const std::size_t count = header[1];
  const std::size_t kept = sizeof header + 4 * count;  // header and indices
  LACONIC_ENFORCE(inner_.size() == kept + 4 * count, "chain.first sent ", inner_.size(), " bytes for ", count,
                  " entries");
  values_.resize(count);
  std::memcpy(values_.data(), inner_.data() + kept, 4 * count);
  payload.assign(inner_.begin(), inner_.begin() + static_cast<std::ptrdiff_t>(kept));
  if (count == 0) return;
  second_->compress(values_, rebuilt_);
  payload.insert(payload.end(), rebuilt_.begin(), rebuilt_.end());
}

void ChainCodec::decompress_add(const Payload& payload, std::span<float> dense) const {
  if (first_->summable()) {
    values_.assign(last_count_, 0.0f);
    if (last_count_ > 0)
      second_->decompress_add(payload, values_);
    else
      LACONIC_ENFORCE(payload.empty(), "expected an empty chain payload, got ", payload.size(), " bytes");
    rebuilt_.resize(last_count_ * sizeof(float));
    std::memcpy(rebuilt_.data(), values_.data(), rebuilt_.size());
    first_->decompress_add(rebuilt_, dense);
    return;
  }
  std::uint32_t header[2];
  LACONIC_ENFORCE(payload.size() >= sizeof header,
                  "expected a chain payload of at least 8 bytes, "
                  "got ",
                  payload.size());
  std::memcpy(header, payload.data(), sizeof header);
  const std::size_t n = header[0], count = header[1];
  LACONIC_ENFORCE(n == dense.size(), "expected a chain payload for ", dense.size(), " elements, got one for ", n);
  const std::size_t kept = sizeof header + 4 * count;
  LACONIC_ENFORCE(payload.size() >= kept, "chain payload of ", payload.size(), " bytes is shorter than its ", count,
                  " indices");
  values_.assign(count, 0.0f);
  if (count > 0) {
    rebuilt_.assign(payload.begin() + static_cast<std::ptrdiff_t>(kept), payload.end());
    second_->decompress_add(rebuilt_, values_);
  } else {
    LACONIC_ENFORCE(payload.size() == kept, "chain payload of ", payload.size(), " bytes carries values for 0 entries");
  }
  const std::uint8_t* indices = payload.data() + sizeof header;
  for (std::size_t i = 0; i < count; ++i) {
    std::uint32_t index;
    std::memcpy(&index, indices + 4 * i, 4);
    LACONIC_ENFORCE(index < n, "chain payload index ", index, " out of range for ", n, " elements");
    dense[index] += values_[i];
  }
}

void ChainCodec::set_seed(std::uint64_t run_seed, int rank) {
  first_->set_seed(derive_seed(run_seed, streams::kChainFirst), rank);
  second_->set_seed(derive_seed(run_seed, streams::kChainSecond), rank);
}

void ChainCodec::on_step(const StepPoint& point) {
  first_->advance(point);
  second_->advance(point);
}

}  // namespace laconic::compress
