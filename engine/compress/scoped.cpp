#include "engine/compress/scoped.hpp"

#include <algorithm>
#include <cstring>

#include "engine/compress/none.hpp"
#include "engine/compress/random.hpp"
#include "engine/core/error.hpp"

namespace laconic::compress {

Scope parse_scope(const std::string& compressor, const std::string& text) {
  if (text == "global") return Scope::Global;
  if (text == "layer") return Scope::Layer;
  throw ConfigError(str_cat(compressor, ".scope must be \"global\" or \"layer\", got \"", text, "\""));
}

ScopedCompressor::ScopedCompressor(std::vector<std::size_t> layer_sizes, Scope scope, std::size_t min_size,
                                   const Factory& make)
    : layer_sizes_(std::move(layer_sizes)) {
  for (std::size_t size : layer_sizes_) {
    layer_offsets_.push_back(total_);
    total_ += size;
  }
  Segment dense;
  std::vector<Segment> compressed;
  for (std::size_t l = 0; l < layer_sizes_.size(); ++l) {
    if (layer_sizes_[l] < min_size) {
      dense.layers.push_back(l);
      dense.size += layer_sizes_[l];
    } else if (scope == Scope::Layer || compressed.empty()) {
      compressed.emplace_back();
      compressed.back().layers.push_back(l);
      compressed.back().size = layer_sizes_[l];
    } else {
      compressed.back().layers.push_back(l);
      compressed.back().size += layer_sizes_[l];
    }
  }
  if (!dense.layers.empty()) {
    dense.compressor = std::make_unique<NoneCompressor>(NoneOptions{});
    segments_.push_back(std::move(dense));
  }
  for (auto& s : compressed) {
    s.compressor = make();
    segments_.push_back(std::move(s));
  }
  const std::unique_ptr<Compressor> inner = make();
  name_ = inner->name();
  LACONIC_ENFORCE(!inner->exchanges_itself(), name_, " exchanges itself and cannot be scoped");
  bool summable = true;
  for (auto& s : segments_) {
    // Consecutive layers sit next to each other in the flat gradient: no copy needed.
    s.contiguous = true;
    for (std::size_t i = 1; i < s.layers.size(); ++i) s.contiguous = s.contiguous && s.layers[i] == s.layers[i - 1] + 1;
    summable = summable && s.compressor->summable();
  }
  // Summed payloads are split by the sizes of the last compress(), so they need it to decode.
  bool self_decoding = !summable;
  for (const auto& s : segments_) self_decoding = self_decoding && s.compressor->self_decoding();
  capabilities_ = inner->capabilities();
  capabilities_.summable = summable;
  capabilities_.self_decoding = self_decoding;
  capabilities_.sparse_pairs = false;
  capabilities_.separable_by_layer = scope == Scope::Layer || inner->separable_by_layer();
  capabilities_.summed_in_transit =
      segments_.empty() ? TransitFormat::None : segments_.back().compressor->capabilities().summed_in_transit;
}

Capabilities ScopedCompressor::capabilities() const { return capabilities_; }

std::span<const float> ScopedCompressor::gather(const Segment& s, std::span<const float> flat) const {
  if (s.contiguous) return flat.subspan(layer_offsets_[s.layers.front()], s.size);
  gathered_.resize(s.size);
  std::size_t at = 0;
  for (std::size_t l : s.layers) {
    std::copy_n(flat.begin() + static_cast<std::ptrdiff_t>(layer_offsets_[l]), layer_sizes_[l],
                gathered_.begin() + static_cast<std::ptrdiff_t>(at));
    at += layer_sizes_[l];
  }
  return gathered_;
}

void ScopedCompressor::scatter_add(const Segment& s, std::span<const float> part, std::span<float> flat) const {
  std::size_t at = 0;
  for (std::size_t l : s.layers)
    for (std::size_t i = 0; i < layer_sizes_[l]; ++i) flat[layer_offsets_[l] + i] += part[at++];
}

void ScopedCompressor::compress(std::span<const float> gradient, Payload& payload) {
  LACONIC_ENFORCE(gradient.size() == total_, "expected a gradient of ", total_, " elements, got ", gradient.size());
  const std::size_t header = capabilities_.summable ? 0 : 4 * (1 + segments_.size());
  payload.resize(header);
  payload_sizes_.clear();
  for (auto& s : segments_) {
    s.compressor->compress(gather(s, gradient), part_);
    payload.insert(payload.end(), part_.begin(), part_.end());
    payload_sizes_.push_back(part_.size());
  }
  if (capabilities_.summable) return;
  // Summed payloads cannot carry a header (it would be summed too); gathered ones do.
  const auto count = static_cast<std::uint32_t>(segments_.size());
  std::memcpy(payload.data(), &count, 4);
  for (std::size_t i = 0; i < segments_.size(); ++i) {
    const auto bytes = static_cast<std::uint32_t>(payload_sizes_[i]);
    std::memcpy(payload.data() + 4 * (1 + i), &bytes, 4);
  }
}

void ScopedCompressor::decompress_add(const Payload& payload, std::span<float> dense) const {
  LACONIC_ENFORCE(dense.size() == total_, "expected ", total_, " elements, got ", dense.size());
  std::vector<std::size_t> sizes;
  std::size_t at = 0;
  if (capabilities_.summable) {
    sizes = payload_sizes_;  // identical on every worker for summable compressors
  } else {
    LACONIC_ENFORCE(payload.size() >= 4, "scoped payload of ", payload.size(), " bytes");
    std::uint32_t count = 0;
    std::memcpy(&count, payload.data(), 4);
    LACONIC_ENFORCE(count == segments_.size(), "expected ", segments_.size(), " segments, payload has ", count);
    at = 4 * (1 + static_cast<std::size_t>(count));
    LACONIC_ENFORCE(payload.size() >= at, "scoped payload of ", payload.size(), " bytes is shorter than its header");
    for (std::size_t i = 0; i < count; ++i) {
      std::uint32_t bytes = 0;
      std::memcpy(&bytes, payload.data() + 4 * (1 + i), 4);
      sizes.push_back(bytes);
    }
  }
  std::size_t expected = at;
  for (std::size_t s : sizes) expected += s;
  LACONIC_ENFORCE(payload.size() == expected, "expected a payload of ", expected, " bytes, got ", payload.size());
  Payload part;
  for (std::size_t i = 0; i < segments_.size(); ++i) {
    const Segment& s = segments_[i];
    part.assign(payload.begin() + static_cast<std::ptrdiff_t>(at),
                payload.begin() + static_cast<std::ptrdiff_t>(at + sizes[i]));
    at += sizes[i];
    if (s.contiguous) {
      s.compressor->decompress_add(part, dense.subspan(layer_offsets_[s.layers.front()], s.size));
    } else {
      decoded_.assign(s.size, 0.0f);
      s.compressor->decompress_add(part, decoded_);
      scatter_add(s, decoded_, dense);
    }
  }
}

void ScopedCompressor::set_seed(std::uint64_t run_seed, int rank) {
  // One stream per segment, the same on every rank, so shared-seed selections stay shared.
  for (std::size_t i = 0; i < segments_.size(); ++i)
    segments_[i].compressor->set_seed(derive_seed(run_seed, streams::kScopeSegment + i), rank);
}

void ScopedCompressor::save_state(StateWriter& out) const {
  for (const auto& s : segments_) s.compressor->save_state(out);
}

void ScopedCompressor::load_state(StateReader& in) {
  for (auto& s : segments_) s.compressor->load_state(in);
}

void ScopedCompressor::on_step(const StepPoint& point) {
  for (auto& s : segments_) s.compressor->advance(point);
}

void ScopedCompressor::aggregate(std::span<float> sum, int workers) const {
  for (const auto& s : segments_) {
    if (s.contiguous) {
      s.compressor->aggregate(sum.subspan(layer_offsets_[s.layers.front()], s.size), workers);
      continue;
    }
    gather(s, sum);  // into gathered_, since the segment is not contiguous
    s.compressor->aggregate(gathered_, workers);
    std::size_t at = 0;
    for (std::size_t l : s.layers)
      for (std::size_t i = 0; i < layer_sizes_[l]; ++i) sum[layer_offsets_[l] + i] = gathered_[at++];
  }
}

}  // namespace laconic::compress
