// What every compressor of a kind promises, checked over the whole registry with Catch2
// generators instead of one copy per compressor: with error feedback, the running average of
// what is sent approaches a constant gradient (without it, it does not); summable payloads,
// summed as float arrays the way allreduce sums them, decode to the sum of the decoded payloads.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

#include "added_compressor.hpp"
#include "compress_test_support.hpp"
#include "engine/compress/builtin.hpp"

using namespace laconic;
using namespace laconic::compress;
using laconic::testing::decode;
using laconic::testing::random_gradient;

namespace {

// The built-in compressors and one added the way a new one is (added_compressor.hpp): the
// tests below cover it without an edit.
const Registry<Compressor>& registry() { return laconic::testing::registry_with_added_compressor(); }

// Every registered compressor whose error feedback is a field on by default (the methods meant
// with it), set to drop about a quarter to three quarters of 64 normal entries: a ratio of a
// quarter where it has one, threshold's tau 1, chain's Top-k (without error feedback of its
// own, so that the chain's is the only one). Compressors that exchange themselves (powersgd)
// are tested with their own collectives in their own file.
std::vector<ComponentSpec> error_feedback_compressors() {
  std::vector<ComponentSpec> out;
  for (const auto& info : registry().infos()) {
    const auto has = [&](const char* name) {
      return std::any_of(info.fields.begin(), info.fields.end(), [&](const FieldSpec& f) { return f.name == name; });
    };
    if (!has("error_feedback")) continue;
    ComponentSpec spec{"compressor", info.name, {}};
    if (!registry().resolve(spec).flag("error_feedback")) continue;
    if (has("ratio")) spec.fields["ratio"] = 0.25;
    if (has("tau")) spec.fields["tau"] = 1.0;
    if (has("first"))
      spec.fields["first"] = nested(ComponentSpec{"compressor", "topk", {{"ratio", 0.25}, {"error_feedback", false}}});
    if (registry().create(spec)->exchanges_itself()) continue;
    out.push_back(spec);
  }
  return out;
}

}  // namespace

TEST_CASE("with error feedback the running average of what is sent approaches a constant gradient",
          "[compress][error_feedback][contract]") {
  const auto specs = error_feedback_compressors();
  // topk, randomk, block_randomk, threshold, chain, ef_signsgd, onebit, and the added one
  REQUIRE(specs.size() >= 8);
  const auto spec = GENERATE_COPY(from_range(specs));
  INFO(spec.name);
  // sum of sent over T steps = T*g - e_T, so the average misses g by |e_T| / T: a bounded
  // residual makes the miss shrink like 1/T. At T = 4096 every one misses by less than 2% of
  // max|g|; without error feedback each one keeps missing by more than 20% (it never sends
  // the small entries, or sends every entry at one magnitude).
  const std::size_t n = 64;
  const auto g = random_gradient(n, 78);
  float g_max = 0.0f;
  for (float v : g) g_max = std::max(g_max, std::fabs(v));
  ComponentSpec off = spec;
  off.fields["error_feedback"] = false;
  auto with = registry().create(spec), without = registry().create(off);
  with->set_seed(5, 0);
  without->set_seed(5, 0);
  std::vector<double> total_with(n, 0.0), total_without(n, 0.0);
  const int steps = 4096;
  for (int step = 0; step < steps; ++step) {
    Payload p;
    with->compress(g, p);
    const auto a = decode(*with, p, n);
    without->compress(g, p);
    const auto b = decode(*without, p, n);
    for (std::size_t i = 0; i < n; ++i) total_with[i] += a[i], total_without[i] += b[i];
  }
  double worst_with = 0.0, worst_without = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    worst_with = std::max(worst_with, std::fabs(total_with[i] / steps - g[i]));
    worst_without = std::max(worst_without, std::fabs(total_without[i] / steps - g[i]));
  }
  CHECK(worst_with <= 0.02 * g_max);
  CHECK(worst_without > 0.2 * g_max);
}

TEST_CASE("summable payloads summed as float arrays decode to the sum of the decoded payloads",
          "[compress][summable][contract][multirank]") {
  // What allreduce does: every worker's whole payload is read as float32 and summed
  // element-wise, and each worker decodes the sum.
  // Every compressor that says its payloads are summable, at its defaults (those that exchange
  // themselves sum inside their own exchange, tested in their own file).
  std::vector<ComponentSpec> summable;
  for (const auto& info : registry().infos()) {
    const ComponentSpec spec{"compressor", info.name, {}};
    const auto c = registry().create(spec);
    if (c->summable() && !c->exchanges_itself()) summable.push_back(spec);
  }
  const auto names = [&] {
    std::set<std::string> out;
    for (const auto& s : summable) out.insert(s.name);
    return out;
  }();
  CHECK(names.count("none") + names.count("randomk") + names.count("block_randomk") +
            names.count("alternating_halves") ==
        4);
  const auto spec = GENERATE_COPY(from_range(summable));
  INFO(spec.name);
  const std::size_t n = 3000, workers = 4;
  std::vector<std::unique_ptr<Compressor>> ranks;
  for (std::size_t r = 0; r < workers; ++r) {
    ranks.push_back(registry().create(spec));
    ranks.back()->set_seed(9, static_cast<int>(r));
    REQUIRE(ranks.back()->summable());
  }
  for (unsigned step = 0; step < 3; ++step) {
    std::vector<Payload> payloads(workers);
    std::vector<float> expected(n, 0.0f);
    for (std::size_t r = 0; r < workers; ++r) {
      ranks[r]->compress(random_gradient(n, static_cast<unsigned>(step * 10 + r)), payloads[r]);
      ranks[r]->decompress_add(payloads[r], expected);
    }
    std::vector<float> summed(payloads[0].size() / 4, 0.0f);
    for (const auto& p : payloads) {
      REQUIRE(p.size() == summed.size() * 4);
      for (std::size_t i = 0; i < summed.size(); ++i) {
        float v;
        std::memcpy(&v, p.data() + 4 * i, 4);
        summed[i] += v;
      }
    }
    Payload reduced(summed.size() * 4);
    std::memcpy(reduced.data(), summed.data(), reduced.size());
    // Same summation order on both sides, so equality is exact.
    for (std::size_t r = 0; r < workers; ++r) CHECK(decode(*ranks[r], reduced, n) == expected);
  }
}

namespace {

// Every registered compressor at its defaults.
std::vector<ComponentSpec> every_compressor() {
  std::vector<ComponentSpec> out;
  for (const auto& info : registry().infos()) out.push_back(ComponentSpec{"compressor", info.name, {}});
  return out;
}

std::string describe(const Capabilities& c) {
  return str_cat("summable ", c.summable, ", self_decoding ", c.self_decoding, ", sparse_pairs ", c.sparse_pairs,
                 ", separable_by_layer ", c.separable_by_layer, ", lossless ", c.lossless, ", fixed_size ",
                 c.fixed_size);
}

}  // namespace

TEST_CASE("error feedback changes what a compressor sends, never what it can do",
          "[compress][contract][capabilities]") {
  // The decorator returns its codec's capabilities whole; a compressor with error feedback on
  // and off must say the same.
  const auto spec = GENERATE_COPY(from_range(every_compressor()));
  const auto resolved = registry().resolve(spec);
  if (!resolved.fields.count("error_feedback")) return;
  INFO(spec.name);
  ComponentSpec on = resolved, off = resolved;
  on.fields["error_feedback"] = true;
  off.fields["error_feedback"] = false;
  const Capabilities with = registry().create(on)->capabilities();
  const Capabilities without = registry().create(off)->capabilities();
  INFO("with: " << describe(with) << "; without: " << describe(without));
  CHECK(with == without);
}

TEST_CASE("a scope keeps every capability of the compressor it wraps but those it changes",
          "[compress][contract][capabilities]") {
  // Three layers, the first below min_size (sent dense): the scoped compressor is summable when
  // its compressed segments are (the dense one is), separable by layer with layer scope, never
  // sparse pairs (segments are framed), self-decoding only when its payloads are gathered and
  // every segment's decodes alone; a compressor that exchanges itself is refused a scope.
  const auto spec = GENERATE_COPY(from_range(every_compressor()));
  const auto scope = GENERATE(as<std::string>{}, "global", "layer");
  INFO(spec.name << ", scope " << scope);
  const std::vector<LayerShape> shapes = {{8}, {40, 8}, {64}};
  const auto bare = registry().create(spec);
  ComponentSpec scoped_spec = spec;
  scoped_spec.fields["scope"] = scope;
  scoped_spec.fields["min_size"] = std::int64_t{16};
  if (bare->exchanges_itself()) {
    CHECK_THROWS_AS(build_compressor(registry(), scoped_spec, shapes, {}), ConfigError);
    return;
  }
  const Capabilities inner = bare->capabilities();
  const Capabilities got = build_compressor(registry(), scoped_spec, shapes, {})->capabilities();
  INFO("inner: " << describe(inner) << "; scoped: " << describe(got));
  CHECK(got.summable == inner.summable);
  CHECK(got.self_decoding == (!inner.summable && inner.self_decoding));
  CHECK_FALSE(got.sparse_pairs);
  CHECK(got.separable_by_layer == (scope == "layer" || inner.separable_by_layer));
  CHECK(got.fixed_size == inner.fixed_size);  // the layers are the same on every worker
  CHECK(got.summed_in_transit == inner.summed_in_transit);
}

TEST_CASE("a compressor has a transit codec exactly when it says its payloads are summed in transit",
          "[compress][contract][capabilities]") {
  // exchange_compressed runs the codec; the run fact `resolved` records the format: they must
  // agree, for the compressor alone, scoped, and with error feedback on and off.
  const auto spec = GENERATE_COPY(from_range(every_compressor()));
  INFO(spec.name);
  std::vector<std::unique_ptr<Compressor>> built;
  built.push_back(registry().create(spec));
  if (!built.front()->exchanges_itself()) {
    ComponentSpec scoped = spec;
    scoped.fields["scope"] = std::string("layer");
    built.push_back(build_compressor(registry(), scoped, {{8}, {40, 8}}, {}));
  }
  const auto resolved = registry().resolve(spec);
  if (resolved.fields.count("error_feedback")) {
    ComponentSpec on = resolved;
    on.fields["error_feedback"] = true;
    built.push_back(registry().create(on));
  }
  for (const auto& c : built)
    CHECK((c->transit_codec() != nullptr) == (c->capabilities().summed_in_transit != TransitFormat::None));
  std::set<std::string> in_transit;
  for (const auto& s : every_compressor())
    if (registry().create(s)->transit_codec() != nullptr) in_transit.insert(s.name);
  CHECK(in_transit == std::set<std::string>{"bf16", "fp16", "quantized_allreduce"});
}

TEST_CASE("a compressor that says its payloads have a fixed size sends the same size for any gradient",
          "[compress][contract][capabilities]") {
  // What allgather_same_size relies on: a payload's size follows from the gradient's size
  // alone, whatever the values, the worker (seed) or the step (error feedback's state).
  std::set<std::string> fixed;
  for (const auto& spec : every_compressor()) {
    if (!registry().create(spec)->capabilities().fixed_size) continue;
    fixed.insert(spec.name);
    INFO(spec.name);
    for (std::size_t n : {1u, 7u, 64u, 1000u}) {
      std::set<std::size_t> sizes;
      for (int rank = 0; rank < 3; ++rank) {
        auto c = registry().create(spec);
        c->set_seed(3, rank);
        std::vector<std::vector<float>> gradients = {random_gradient(n, static_cast<unsigned>(rank)),
                                                     std::vector<float>(n, 0.0f), std::vector<float>(n, -1e30f)};
        for (const auto& g : gradients) {
          Payload p;
          c->compress(g, p);
          sizes.insert(p.size());
        }
      }
      CHECK(sizes.size() == 1);
    }
  }
  CHECK(fixed == std::set<std::string>{"bf16", "fp16", "quantized_allreduce", "signsgd", "signum", "sparseloco"});
}

TEST_CASE("a compressor's traits from its options are what the built compressor says", "[compress][contract][traits]") {
  // Registry::traits asks the options struct without building; build_compressor relies on it to
  // refuse a scope for a compressor that exchanges itself.
  const auto spec = GENERATE_COPY(from_range(every_compressor()));
  INFO(spec.name);
  const CompressorTraits asked = registry().traits(spec);
  CHECK(asked.multi_round == (registry().create(spec)->multi_round() != nullptr));
  CHECK(asked.multi_round == (spec.name == "powersgd"));
}
