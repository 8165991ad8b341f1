// Compressor throughput in GB/s of fp32 input (compress + decompress, one thread) on 1M and 16M
// floats, for every built-in compressor; memcpy of the same buffer as the memory-bandwidth
// limit; the LibTorch-ops versions of Top-k, QSGD, fp16 and 8-bit uniform as the baseline; and
// each compressor's peak extra heap memory (beyond its input and its payload) as a counter; the
// seconds of compress and of decompress per call as counters too (compress_s, decompress_s).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>

#include "engine/compress/builtin.hpp"
#include "engine/compress/demo_codec.hpp"
#include "engine/compress/onebit_adam_codec.hpp"
#include "engine/compress/state.hpp"
#include "heap_counter.hpp"
#include "torch_reference.hpp"

namespace {

using laconic::ComponentSpec;
using laconic::Value;
using Clock = std::chrono::steady_clock;

std::vector<float> gradient(std::size_t n) {
  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  std::vector<float> g(n);
  for (auto& v : g) v = normal(rng);
  return g;
}

void set_throughput(benchmark::State& state, std::size_t n) {
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(n * sizeof(float)));
}

void bm_memcpy(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  auto g = gradient(n);
  std::vector<float> out(n);
  for (auto _ : state) {
    std::memcpy(out.data(), g.data(), n * sizeof(float));
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  set_throughput(state, n);
}

void bm_compressor(benchmark::State& state, const ComponentSpec& spec) {
  const auto n = static_cast<std::size_t>(state.range(0));
  auto g = gradient(n);
  std::vector<float> dense(n, 0.0f);
  auto compressor = laconic::compress::builtin_compressors().create(spec);
  compressor->set_seed(1, 0);
  laconic::compress::Payload payload;
  // Peak extra memory: the first round trip from a fresh compressor, less its payload.
  const std::size_t base = laconic::bench::heap_live_bytes();
  laconic::bench::reset_heap_peak();
  compressor->compress(g, payload);
  compressor->decompress_add(payload, dense);
  const double extra =
      static_cast<double>(laconic::bench::heap_peak_bytes() - base) - static_cast<double>(payload.capacity());
  // Every timed round trip starts from the state the first one left (error feedback's residual,
  // DGC's accumulation, a generator's position), restored with the clock paused: on the same
  // input, a residual left to grow would send more and more (threshold's pairs went from 2% to
  // 67% of the elements with the number of iterations Google Benchmark chose), and a row would
  // time whatever state its iteration count reached.
  std::vector<std::uint8_t> after_first;
  laconic::StateWriter saver(after_first);
  compressor->save_state(saver);
  // The two halves apart as well, for a hardware profile's costs (bench/compressor_costs.py).
  double compress_seconds = 0, decompress_seconds = 0;
  for (auto _ : state) {
    state.PauseTiming();
    laconic::StateReader restorer(after_first);
    compressor->load_state(restorer);
    state.ResumeTiming();
    const auto t0 = Clock::now();
    compressor->compress(g, payload);
    const auto t1 = Clock::now();
    compressor->decompress_add(payload, dense);
    benchmark::DoNotOptimize(dense.data());
    compress_seconds += std::chrono::duration<double>(t1 - t0).count();
    decompress_seconds += std::chrono::duration<double>(Clock::now() - t1).count();
  }
  set_throughput(state, n);
  state.counters["compress_s"] = benchmark::Counter(compress_seconds, benchmark::Counter::kAvgIterations);
  state.counters["decompress_s"] = benchmark::Counter(decompress_seconds, benchmark::Counter::kAvgIterations);
  state.counters["extra_bytes"] = extra;
  state.counters["extra_per_input"] = extra / static_cast<double>(n * sizeof(float));
  state.counters["payload_bytes"] = static_cast<double>(payload.size());
}

/// An optimizer's own codec on one square matrix layer of n elements, one worker: compress, then
/// one payload decoded and aggregated. DeMo's (each 64 x 64 block's DCT-II, its 32 largest
/// coefficients, the sent part decoded off the momentum; then the layer's IDCT) and 1-bit Adam's
/// (past its warm-up: the momentum's scale and sign bits with error feedback).
void bm_own_codec(benchmark::State& state, laconic::compress::Compressor& codec) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto side = static_cast<std::size_t>(std::lround(std::sqrt(static_cast<double>(n))));
  const auto g = gradient(side * side);
  std::vector<float> dense(side * side, 0.0f);
  codec.set_layer_shapes({{side, side}});
  laconic::compress::Payload payload;
  const std::size_t base = laconic::bench::heap_live_bytes();
  laconic::bench::reset_heap_peak();
  codec.compress(g, payload);
  const double extra =
      static_cast<double>(laconic::bench::heap_peak_bytes() - base) - static_cast<double>(payload.capacity());
  double compress_seconds = 0, decompress_seconds = 0;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    codec.compress(g, payload);
    const auto t1 = Clock::now();
    std::fill(dense.begin(), dense.end(), 0.0f);
    codec.decompress_add(payload, dense);
    codec.aggregate(dense, 1);
    benchmark::DoNotOptimize(dense.data());
    compress_seconds += std::chrono::duration<double>(t1 - t0).count();
    decompress_seconds += std::chrono::duration<double>(Clock::now() - t1).count();
  }
  set_throughput(state, side * side);
  state.counters["compress_s"] = benchmark::Counter(compress_seconds, benchmark::Counter::kAvgIterations);
  state.counters["decompress_s"] = benchmark::Counter(decompress_seconds, benchmark::Counter::kAvgIterations);
  state.counters["extra_bytes"] = extra;
  state.counters["extra_per_input"] = extra / static_cast<double>(side * side * sizeof(float));
  state.counters["payload_bytes"] = static_cast<double>(payload.size());
}

/// The sum over one worker: nothing to add. PowerSGD's two collectives cost nothing here, so its
/// row times the codec alone (3 matrix products and Gram-Schmidt per step).
struct SoloReducer : laconic::compress::SumReducer {
  void sum(std::span<float> values) override { benchmark::DoNotOptimize(values.data()); }
  int workers() const override { return 1; }
};

/// PowerSGD on one square matrix layer of n elements (1024 x 1024, 4096 x 4096).
void bm_powersgd(benchmark::State& state, const ComponentSpec& spec) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto side = static_cast<std::size_t>(std::lround(std::sqrt(static_cast<double>(n))));
  const auto g = gradient(n);
  std::vector<float> work = g;
  auto built = laconic::compress::builtin_compressors().create(spec);
  laconic::compress::MultiRoundCompressor* compressor = built->multi_round();
  if (compressor == nullptr) {
    state.SkipWithError("not a compressor that exchanges itself");
    return;
  }
  compressor->set_seed(1, 0);
  compressor->set_layer_shapes({{side, side}});
  SoloReducer reducer;
  const std::size_t base = laconic::bench::heap_live_bytes();
  laconic::bench::reset_heap_peak();
  std::size_t payload = compressor->exchange(work, reducer);
  const double extra = static_cast<double>(laconic::bench::heap_peak_bytes() - base);
  double exchange_seconds = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::copy(g.begin(), g.end(), work.begin());  // exchange() overwrites its input
    state.ResumeTiming();
    const auto t0 = Clock::now();
    payload = compressor->exchange(work, reducer);
    exchange_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
    benchmark::DoNotOptimize(work.data());
  }
  set_throughput(state, n);
  // Both halves are in exchange(): all of it counts as compressing (as time_compress does).
  state.counters["compress_s"] = benchmark::Counter(exchange_seconds, benchmark::Counter::kAvgIterations);
  state.counters["decompress_s"] = 0;
  state.counters["extra_bytes"] = extra;
  state.counters["extra_per_input"] = extra / static_cast<double>(n * sizeof(float));
  state.counters["payload_bytes"] = static_cast<double>(payload);
}

template <class F>
void bm_torch(benchmark::State& state, F roundtrip) {
  const auto n = static_cast<std::size_t>(state.range(0));
  auto data = gradient(n);
  auto g = torch::from_blob(data.data(), {static_cast<std::int64_t>(n)}, torch::kFloat);
  for (auto _ : state) {
    auto out = roundtrip(g);
    benchmark::DoNotOptimize(out.data_ptr());
  }
  set_throughput(state, n);
}

ComponentSpec spec(const std::string& name, std::map<std::string, Value> fields = {}) {
  return {"compressor", name, std::move(fields)};
}

void register_all(const std::vector<std::int64_t>& sizes) {
  auto add = [&](const std::string& label, auto fn) {
    auto* b = benchmark::RegisterBenchmark(label.c_str(), fn);
    for (auto n : sizes) b->Arg(n);
    b->Unit(benchmark::kMillisecond)->UseRealTime();
  };
  add("memcpy", bm_memcpy);
  const std::vector<std::pair<std::string, ComponentSpec>> methods = {
      {"none", spec("none")},
      {"fp16", spec("fp16")},
      {"bf16", spec("bf16")},
      {"uniform_8bit", spec("uniform", {{"bits", std::int64_t{8}}})},
      {"adaptive", spec("adaptive")},
      {"qsgd_16", spec("qsgd", {{"levels", std::int64_t{16}}})},
      {"qsgd_16_elias", spec("qsgd", {{"levels", std::int64_t{16}}, {"coding", std::string("elias")}})},
      {"terngrad", spec("terngrad")},
      {"signsgd", spec("signsgd")},
      {"signum", spec("signum")},
      {"ef_signsgd", spec("ef_signsgd")},
      {"onebit", spec("onebit")},
      {"topk_1pct", spec("topk", {{"ratio", 0.01}, {"error_feedback", false}})},
      {"topk_1pct_ef", spec("topk", {{"ratio", 0.01}})},
      {"randomk_1pct", spec("randomk", {{"ratio", 0.01}})},
      {"block_randomk_1pct", spec("block_randomk", {{"ratio", 0.01}})},
      {"threshold_2.33", spec("threshold", {{"tau", 2.33}})},
      {"dgc_0.1pct", spec("dgc", {{"ratio", 0.001}, {"warmup", std::int64_t{0}}})},
      {"sparseloco_4096_top64", spec("sparseloco")},
      {"chain_topk_1pct_qsgd_16",
       spec("chain", {{"first", laconic::nested(spec("topk", {{"ratio", 0.01}}))},
                      {"second", laconic::nested(spec("qsgd", {{"levels", std::int64_t{16}}}))}})},
  };
  auto registry = laconic::compress::builtin_compressors();
  for (const auto& [label, s] : methods) {
    if (!registry.contains(s.name)) continue;  // not registered in this build
    add(label, [s = s](benchmark::State& state) { bm_compressor(state, s); });
  }
  add("demo_64_top32", [](benchmark::State& state) {
    laconic::compress::DemoCodec codec(64, 32, 0.999);
    bm_own_codec(state, codec);
  });
  add("onebit_adam_frozen", [](benchmark::State& state) {
    laconic::compress::OnebitAdamCodec codec(0);
    codec.advance({0, 0});  // past a warm-up of 0 steps: 1-bit momenta
    bm_own_codec(state, codec);
  });
  add("powersgd_rank4", [](benchmark::State& state) {
    bm_powersgd(state, spec("powersgd", {{"rank", std::int64_t{4}}}));
  });
  add("torch_topk_1pct", [](benchmark::State& s) {
    bm_torch(s, [](const torch::Tensor& g) { return laconic::bench::torch_topk_roundtrip(g, 0.01); });
  });
  add("torch_qsgd_16", [](benchmark::State& s) {
    bm_torch(s, [](const torch::Tensor& g) { return laconic::bench::torch_qsgd_roundtrip(g, 16, 512); });
  });
  add("torch_fp16", [](benchmark::State& s) {
    bm_torch(s, [](const torch::Tensor& g) { return laconic::bench::torch_fp16_roundtrip(g); });
  });
  add("torch_uniform_8bit", [](benchmark::State& s) {
    bm_torch(s, [](const torch::Tensor& g) { return laconic::bench::torch_uniform_roundtrip(g, 8); });
  });
}

/// --sizes=N,N,...: the gradient sizes measured (default 1M and 16M elements), taken out of argv
/// before Google Benchmark reads it.
std::vector<std::int64_t> take_sizes(int& argc, char** argv) {
  std::vector<std::int64_t> sizes = {1 << 20, 1 << 24};
  const std::string flag = "--sizes=";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind(flag, 0) != 0) continue;
    sizes.clear();
    for (std::size_t at = flag.size(); at < arg.size();) {
      const std::size_t comma = std::min(arg.find(',', at), arg.size());
      sizes.push_back(std::stoll(arg.substr(at, comma - at)));
      at = comma + 1;
    }
    std::copy(argv + i + 1, argv + argc, argv + i);
    --argc;
    break;
  }
  return sizes;
}

}  // namespace

int main(int argc, char** argv) {
  at::set_num_threads(1);  // every method single-threaded, LibTorch's included
  register_all(take_sizes(argc, argv));
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
