#include "engine/compress/layer_costs.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "engine/compress/builtin.hpp"
#include "engine/compress/random.hpp"

namespace laconic::compress {
namespace {

struct CodecTimes {
  double payload_bytes = 0, compress = 0, decode = 0;
};

double median_of_times(std::vector<double>& values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// A gradient of standard normal values (Box-Muller over the seeded generator), the same for
// every compressor measured on the layer.
std::vector<float> gaussian_gradient(std::size_t elements, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<float> out(elements);
  for (float& x : out) {
    const double u = std::max(1e-12, static_cast<double>(rng.uniform()));
    x = static_cast<float>(std::sqrt(-2.0 * std::log(u)) * std::cos(2 * M_PI * rng.uniform()));
  }
  return out;
}

// One compressor on one layer: compress and decode repeated until `timing` is spent, medians.
CodecTimes time_codec(Compressor& compressor, const std::vector<float>& gradient, const LayerTiming& timing) {
  using Clock = std::chrono::steady_clock;
  const auto since = [](Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); };
  std::vector<float> decoded(gradient.size());
  Payload payload;
  std::vector<double> compress_times, decode_times;
  double spent = 0;
  for (int repeat = 0; repeat <= timing.max_repeats; ++repeat) {
    compressor.advance(StepPoint{0, repeat, nullptr});
    auto t = Clock::now();
    compressor.compress(gradient, payload);
    const double compress = since(t);
    t = Clock::now();
    compressor.decompress_add(payload, decoded);
    const double decode = since(t);
    if (repeat == 0) continue;  // the first warms the caches and sizes the buffers
    compress_times.push_back(compress);
    decode_times.push_back(decode);
    spent += compress + decode;
    if (spent >= timing.seconds && compress_times.size() >= 3) break;
  }
  return {static_cast<double>(payload.size()), median_of_times(compress_times), median_of_times(decode_times)};
}

}  // namespace

std::optional<LayerCodecCosts> measure_layer_costs(const Registry<Compressor>& registry, const ComponentSpec& spec,
                                                   const std::vector<LayerShape>& shapes, LayerTiming timing) {
  const auto whole = build_compressor(registry, spec, shapes, {});
  if (whole->exchanges_itself() || whole->capabilities().lossless) return std::nullopt;
  LayerCodecCosts costs;
  // Summed in transit (fp16, bf16 under allreduce) is summed too: an allreduce carries it.
  costs.summable = whole->capabilities().summable ||
                   whole->capabilities().summed_in_transit != TransitFormat::None;
  ComponentSpec dense_spec;
  dense_spec.kind = spec.kind;
  dense_spec.name = "none";
  for (std::size_t l = 0; l < shapes.size(); ++l) {
    std::size_t elements = 1;
    for (const std::size_t d : shapes[l]) elements *= d;
    const std::vector<float> gradient = gaussian_gradient(elements, 1000 + l);
    const auto layer = build_compressor(registry, spec, {shapes[l]}, {});
    const auto dense = build_compressor(registry, dense_spec, {shapes[l]}, {});
    const CodecTimes own = time_codec(*layer, gradient, timing);
    const CodecTimes fp32 = time_codec(*dense, gradient, timing);
    costs.layers.push_back({elements, own.payload_bytes, own.compress, own.decode, fp32.compress, fp32.decode});
  }
  return costs;
}

}  // namespace laconic::compress
