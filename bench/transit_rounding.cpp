// The error of fp16, bf16, int8 and int4 summed in transit (the allreduce of
// allreduce_sum_encoded: every hop rounds or requantizes its partial sum again, as DDP's fp16
// hook, NCCL and INTELLECT-1's int8 ring do), against the fp32 mean, by the number of workers and
// the algorithm; beside it the gathered form (each payload cast or quantized once, summed in
// fp32). Thread ranks over memory; Gaussian gradients, each worker's its own; quantized_allreduce
// with its defaults (a scale per 1024 elements, stochastic rounding, each rank its own stream).
// Prints a Markdown table (docs/compressors.md, "fp16 and bf16 summed in the ring" and
// "quantized_allreduce").
//   build/bench/laconic_transit_rounding [elements=65536]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "engine/comm/memory_communicator.hpp"
#include "engine/compress/random.hpp"
#include "engine/compress/half.hpp"
#include "engine/compress/quantized_allreduce.hpp"

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

float rounded(const WireCodec& codec, float v) {
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

// A format as the bench runs it: each rank's codec (fp16 and bf16 share one; a quantizer per rank,
// each drawing its own stream).
struct Format {
  const char* name;
  std::vector<std::unique_ptr<compress::ChunkQuantizer>> quantizers;
  const WireCodec* shared = nullptr;

  const WireCodec& of(int rank) const { return shared != nullptr ? *shared : *quantizers[static_cast<std::size_t>(rank)]; }
  bool idempotent() const { return of(0).idempotent(); }
};

Format quantized(const char* name, unsigned bits, int p) {
  Format f{name, {}};
  for (int r = 0; r < p; ++r) {
    f.quantizers.push_back(std::make_unique<compress::ChunkQuantizer>(bits, 1024, compress::LevelRounding::Stochastic));
    f.quantizers.back()->stream().reseed(compress::derive_seed(7, static_cast<std::uint64_t>(r)));
  }
  return f;
}

// The mean through the encoded allreduce: each worker's gradient divided by p, and cast first
// where the format is a cast (a quantizer's first message is its quantization).
std::vector<float> transit_mean(const std::vector<std::vector<float>>& x, const Format& format,
                                comm::AllreduceAlgorithm algorithm) {
  const int p = static_cast<int>(x.size());
  std::vector<std::vector<float>> data = x;
  for (auto& v : data)
    for (float& e : v) e = format.idempotent() ? rounded(format.of(0), e / static_cast<float>(p)) : e / static_cast<float>(p);
  comm::MemoryNetwork network(p, std::chrono::seconds(60));
  std::vector<std::thread> threads;
  for (int r = 0; r < p; ++r)
    threads.emplace_back([&, r] {
      comm::MemoryCommunicator comm(network, r);
      comm.allreduce_sum_encoded(data[static_cast<std::size_t>(r)], format.of(r), algorithm);
    });
  for (auto& t : threads) t.join();
  return data[0];
}

// Gathered: each payload cast or quantized once (whole), decoded and summed in fp32, then divided.
std::vector<float> gathered_mean(const std::vector<std::vector<float>>& x, const Format& format) {
  std::vector<float> sum(x[0].size(), 0.0f), decoded = sum;
  std::vector<std::uint8_t> scratch(format.of(0).bytes(decoded.size()));
  for (std::size_t r = 0; r < x.size(); ++r) {
    decoded = x[r];
    format.of(static_cast<int>(r)).round(decoded, scratch);
    for (std::size_t i = 0; i < decoded.size(); ++i) sum[i] += decoded[i];
  }
  for (float& s : sum) s /= static_cast<float>(x.size());
  return sum;
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t n = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 65536;
  std::printf("%zu elements per worker, Gaussian; errors relative to the rms of the exact mean\n\n", n);
  std::printf("| format | workers | ring rms | ring max | ring bias | halving-doubling rms | one-shot rms | gathered rms |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  for (const char* name : {"fp16", "bf16", "int8", "int4"}) {
    for (int p : {2, 4, 8, 16, 32, 64}) {
      const std::string format_name = name;
      Format format = format_name == "fp16"   ? Format{name, {}, &compress::fp16_wire_codec()}
                      : format_name == "bf16" ? Format{name, {}, &compress::bf16_wire_codec()}
                                              : quantized(name, format_name == "int8" ? 8 : 4, p);
      const auto x = gradients(p, n);
      std::vector<double> exact(n, 0);
      for (const auto& v : x)
        for (std::size_t i = 0; i < n; ++i) exact[i] += static_cast<double>(v[i]) / p;
      const Errors ring = errors_of(transit_mean(x, format, comm::AllreduceAlgorithm::Ring), exact);
      const Errors gathered = errors_of(gathered_mean(x, format), exact);
      if (!format.idempotent()) {  // the ring only
        std::printf("| %s | %d | %.2e | %.2e | %+.1e | - | - | %.2e |\n", name, p, ring.rms, ring.max, ring.bias,
                    gathered.rms);
        continue;
      }
      const Errors hd = errors_of(transit_mean(x, format, comm::AllreduceAlgorithm::HalvingDoubling), exact);
      const Errors shot = errors_of(transit_mean(x, format, comm::AllreduceAlgorithm::OneShot), exact);
      std::printf("| %s | %d | %.2e | %.2e | %+.1e | %.2e | %.2e | %.2e |\n", name, p, ring.rms, ring.max, ring.bias,
                  hd.rms, shot.rms, gathered.rms);
    }
  }
  return 0;
}
