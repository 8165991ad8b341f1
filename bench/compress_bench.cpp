// Compressor throughput: Top-k (with and without error feedback) against copying (none), on
// LeNet-5's gradient size and on a 1M-element layer.
#include <benchmark/benchmark.h>

#include <random>

#include "engine/compress/none.hpp"
#include "engine/compress/topk.hpp"

namespace {

std::vector<float> gradient(std::size_t n) {
  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  std::vector<float> g(n);
  for (auto& v : g) v = normal(rng);
  return g;
}

template <class Make>
void compress(benchmark::State& state, Make make) {
  const auto n = static_cast<std::size_t>(state.range(0));
  auto g = gradient(n);
  auto compressor = make();
  laconic::compress::Payload payload;
  for (auto _ : state) {
    compressor.compress(g, payload);
    benchmark::DoNotOptimize(payload.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * n * sizeof(float)));
}

void BM_none(benchmark::State& s) {
  compress(s, [] { return laconic::compress::NoneCompressor({}); });
}
void BM_topk_1pct(benchmark::State& s) {
  compress(s, [] { return laconic::compress::TopkCompressor({0.01, false}); });
}
void BM_topk_1pct_error_feedback(benchmark::State& s) {
  compress(s, [] { return laconic::compress::TopkCompressor({0.01, true}); });
}

}  // namespace

BENCHMARK(BM_none)->Arg(61706)->Arg(1 << 20);
BENCHMARK(BM_topk_1pct)->Arg(61706)->Arg(1 << 20);
BENCHMARK(BM_topk_1pct_error_feedback)->Arg(61706)->Arg(1 << 20);
