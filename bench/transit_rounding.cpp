// The error of fp16 and bf16 summed in transit (the allreduce of allreduce_sum_encoded: every hop
// rounds its partial sum again, as DDP's fp16 hook and NCCL do), against the fp32 mean, by the
// number of workers and the algorithm; beside it the gathered form (each payload cast once,
// summed in fp32). Thread ranks over memory; Gaussian gradients, each worker's its own.
// Prints a Markdown table (docs/compressors.md, "fp16 and bf16 summed in the ring").
//   build/bench/laconic_transit_rounding [elements=65536]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "engine/comm/memory_communicator.hpp"
#include "engine/compress/random.hpp"
#include "engine/topology/transit_codec.hpp"

using namespace laconic;

namespace {

struct Errors {
  double rms = 0;   // rms of (result - exact mean) over rms of the exact mean
  double max = 0;   // largest |result - exact| over rms of the exact mean
  double bias = 0;  // mean of (result - exact), over rms of the exact mean
};

std::vector<std::vector<float>> gradients(int p, std::size_t n) {
  std::vector<std::vector<float>> x(static_cast<std::size_t>(p), std::vector<float>(n));
  compress::Rng rng(static_cast<std::uint64_t>(1000 + p));
  for (auto& v : x)
    for (float& e : v) {
      const double u = std::max(static_cast<double>(rng.uniform()), 1e-12);
      e = static_cast<float>(std::sqrt(-2 * std::log(u)) * std::cos(2 * M_PI * rng.uniform()));
    }
  return x;
}

float rounded(const comm::WireCodec& codec, float v) {
  std::uint8_t bytes[4];
  codec.round({&v, 1}, bytes);
  return v;
}

Errors errors_of(const std::vector<float>& got, const std::vector<double>& exact) {
  Errors e;
  double scale = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double d = got[i] - exact[i];
    e.rms += d * d;
    e.bias += d;
    e.max = std::max(e.max, std::abs(d));
    scale += exact[i] * exact[i];
  }
  const double n = static_cast<double>(got.size()), rms_exact = std::sqrt(scale / n);
  return {std::sqrt(e.rms / n) / rms_exact, e.max / rms_exact, e.bias / n / rms_exact};
}

// The mean through the encoded allreduce: each worker's gradient divided by p and cast first.
std::vector<float> transit_mean(const std::vector<std::vector<float>>& x, const comm::WireCodec& codec,
                                comm::AllreduceAlgorithm algorithm) {
  const int p = static_cast<int>(x.size());
  std::vector<std::vector<float>> data = x;
  for (auto& v : data)
    for (float& e : v) e = rounded(codec, e / static_cast<float>(p));
  comm::MemoryNetwork network(p, std::chrono::seconds(60));
  std::vector<std::thread> threads;
  for (int r = 0; r < p; ++r)
    threads.emplace_back([&, r] {
      comm::MemoryCommunicator comm(network, r);
      comm.allreduce_sum_encoded(data[static_cast<std::size_t>(r)], codec, algorithm);
    });
  for (auto& t : threads) t.join();
  return data[0];
}

// Gathered: each payload cast once, decoded and summed in fp32, then divided.
std::vector<float> gathered_mean(const std::vector<std::vector<float>>& x, const comm::WireCodec& codec) {
  std::vector<float> sum(x[0].size(), 0.0f);
  for (const auto& v : x)
    for (std::size_t i = 0; i < v.size(); ++i) sum[i] += rounded(codec, v[i]);
  for (float& s : sum) s /= static_cast<float>(x.size());
  return sum;
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t n = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 65536;
  std::printf("%zu elements per worker, Gaussian; errors relative to the rms of the exact mean\n\n", n);
  std::printf("| format | workers | ring rms | ring max | ring bias | halving-doubling rms | one-shot rms | gathered rms |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  for (auto [name, format] : {std::pair{"fp16", compress::TransitFormat::Fp16}, std::pair{"bf16", compress::TransitFormat::Bf16}}) {
    const comm::WireCodec& codec = *topology::transit_codec(format);
    for (int p : {2, 4, 8, 16, 32, 64}) {
      const auto x = gradients(p, n);
      std::vector<double> exact(n, 0);
      for (const auto& v : x)
        for (std::size_t i = 0; i < n; ++i) exact[i] += static_cast<double>(v[i]) / p;
      const Errors ring = errors_of(transit_mean(x, codec, comm::AllreduceAlgorithm::Ring), exact);
      const Errors hd = errors_of(transit_mean(x, codec, comm::AllreduceAlgorithm::HalvingDoubling), exact);
      const Errors shot = errors_of(transit_mean(x, codec, comm::AllreduceAlgorithm::OneShot), exact);
      const Errors gathered = errors_of(gathered_mean(x, codec), exact);
      std::printf("| %s | %d | %.2e | %.2e | %+.1e | %.2e | %.2e | %.2e |\n", name, p, ring.rms, ring.max, ring.bias,
                  hd.rms, shot.rms, gathered.rms);
    }
  }
  return 0;
}
