// fp16 and bf16 summed in transit (DDP's fp16 hook, NCCL's half-precision allreduce): the
// encoded allreduce against a plain reference that replays each algorithm's order of sums and
// roundings, every rank ending with the same bits, its error against the fp32 mean bounded by
// the hops and unbiased, and the topology sending half of dense's bytes at any number of workers.
#include <catch2/catch.hpp>

#include <cmath>
#include <thread>

#include "engine/comm/memory_communicator.hpp"
#include "engine/compress/builtin.hpp"
#include "engine/compress/half.hpp"
#include "engine/compress/random.hpp"
#include "engine/topology/builtin.hpp"
#include "allreduce_ranks.hpp"

using namespace laconic;
using namespace std::chrono_literals;

namespace {

const WireCodec& fp16() { return compress::fp16_wire_codec(); }
const WireCodec& bf16() { return compress::bf16_wire_codec(); }

float rounded(const WireCodec& codec, float v) {
  std::uint8_t bytes[4];
  codec.round({&v, 1}, bytes);
  return v;
}

// Every rank's vector: Gaussian values, already in the format (what the exchange starts from).
std::vector<std::vector<float>> inputs(const WireCodec& codec, int p, std::size_t n, std::uint64_t seed) {
  std::vector<std::vector<float>> x(static_cast<std::size_t>(p), std::vector<float>(n));
  compress::Rng rng(seed);
  for (auto& v : x)
    for (float& e : v) {
      const double u = std::max(static_cast<double>(rng.uniform()), 1e-12);
      e = rounded(codec, static_cast<float>(std::sqrt(-2 * std::log(u)) * std::cos(2 * M_PI * rng.uniform())));
    }
  return x;
}

// Runs allreduce_sum_encoded on p thread ranks over memory; each rank's result.
std::vector<std::vector<float>> encoded_sum(const std::vector<std::vector<float>>& x, const WireCodec& codec,
                                            comm::AllreduceAlgorithm algorithm,
                                            std::vector<comm::ByteCounters>* counters = nullptr) {
  const int p = static_cast<int>(x.size());
  comm::MemoryNetwork network(p, 20s);
  std::vector<std::vector<float>> out = x;
  if (counters != nullptr) counters->assign(x.size(), {});
  std::vector<std::thread> threads;
  for (int r = 0; r < p; ++r)
    threads.emplace_back([&, r] {
      comm::MemoryCommunicator comm(network, r);
      comm.allreduce_sum_encoded(out[static_cast<std::size_t>(r)], codec, algorithm);
      if (counters != nullptr) (*counters)[static_cast<std::size_t>(r)] = comm.counters();
    });
  for (auto& t : threads) t.join();
  return out;
}

// The ring's order, replayed: chunk c starts at rank c and passes to c+1, c+2, ..., each adding
// its own value in fp32 and rounding; the one-shot adds in rank order and rounds once.
std::vector<float> reference_sum(const std::vector<std::vector<float>>& x, const WireCodec& codec,
                                 comm::AllreduceAlgorithm algorithm) {
  const int p = static_cast<int>(x.size());
  const std::size_t n = x[0].size();
  std::vector<float> sum(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (algorithm == comm::AllreduceAlgorithm::OneShot) {
      float s = x[0][i];
      for (int r = 1; r < p; ++r) s += x[static_cast<std::size_t>(r)][i];
      sum[i] = rounded(codec, s);
      continue;
    }
    // Element i's chunk: chunks of n split into p nearly equal parts.
    const std::size_t base = n / static_cast<std::size_t>(p), extra = n % static_cast<std::size_t>(p);
    const std::size_t big = extra * (base + 1);
    const int c = static_cast<int>(i < big ? i / (base + 1) : extra + (i - big) / base);
    float s = x[static_cast<std::size_t>(c)][i];
    for (int k = 1; k < p; ++k) s = rounded(codec, s + x[static_cast<std::size_t>((c + k) % p)][i]);
    sum[i] = s;
  }
  return sum;
}

}  // namespace

TEST_CASE("the ring and the one-shot sum in fp16 and bf16 round where the reference rounds, bit for bit",
          "[topology][transit]") {
  for (const WireCodec* codec : {&fp16(), &bf16()})
    for (int p : {2, 3, 4, 8})
      for (auto algorithm : {comm::AllreduceAlgorithm::Ring, comm::AllreduceAlgorithm::OneShot}) {
        INFO("p=" << p << " one_shot=" << (algorithm == comm::AllreduceAlgorithm::OneShot));
        const auto x = inputs(*codec, p, 1001, 7 + static_cast<std::uint64_t>(p));
        const auto got = encoded_sum(x, *codec, algorithm);
        const auto want = reference_sum(x, *codec, algorithm);
        for (int r = 0; r < p; ++r) CHECK(got[static_cast<std::size_t>(r)] == want);
      }
}

TEST_CASE("halving-doubling in fp16 leaves every rank the same bits, each a rounded value near the fp32 sum",
          "[topology][transit]") {
  for (int p : {2, 4, 5, 8}) {
    INFO("p=" << p);
    const auto x = inputs(fp16(), p, 999, 3);
    const auto got = encoded_sum(x, fp16(), comm::AllreduceAlgorithm::HalvingDoubling);
    for (int r = 1; r < p; ++r) CHECK(got[static_cast<std::size_t>(r)] == got[0]);
    for (std::size_t i = 0; i < x[0].size(); ++i) {
      double exact = 0;
      for (const auto& v : x) exact += v[i];
      CHECK(got[0][i] == rounded(fp16(), got[0][i]));
      // log2(p) hops (one more for a fold), each at most half an fp16 ulp of a partial sum.
      CHECK(std::abs(got[0][i] - exact) <= 4 * std::ldexp(std::abs(exact) + p, -11));
    }
  }
}

TEST_CASE("the encoded ring sends the fp32 ring's messages in two bytes an element", "[topology][transit]") {
  for (int p : {4, 8}) {
    std::vector<comm::ByteCounters> counters;
    const auto x = inputs(fp16(), p, 4096, 1);
    encoded_sum(x, fp16(), comm::AllreduceAlgorithm::Ring, &counters);
    for (int r = 0; r < p; ++r) {
      CHECK(2 * counters[static_cast<std::size_t>(r)].sent ==
            comm::ring_allreduce_bytes_sent(4096, p, r));
      CHECK(counters[static_cast<std::size_t>(r)].messages == static_cast<std::uint64_t>(2 * (p - 1)));
    }
  }
}

TEST_CASE("fp16 summed in the ring: its error against the fp32 mean grows with the hops and has no bias",
          "[topology][transit]") {
  // The mean of p Gaussian vectors through the fp16 ring (each divided by p first, as DDP's hook
  // does) against the exact mean. Each of the p-1 hops rounds a partial sum to half an ulp at
  // most (2^-11 relative); the mean error stays near zero (round to nearest even has no bias).
  for (int p : {2, 8, 32, 64}) {
    INFO("p=" << p);
    const std::size_t n = 4096;
    auto x = inputs(fp16(), p, n, 11);
    std::vector<double> exact(n, 0);
    for (auto& v : x)
      for (std::size_t i = 0; i < n; ++i) {
        exact[i] += v[i] / p;
        v[i] = rounded(fp16(), v[i] / static_cast<float>(p));
      }
    const auto got = encoded_sum(x, fp16(), comm::AllreduceAlgorithm::Ring)[0];
    double bias = 0, sq = 0, scale = 0;
    for (std::size_t i = 0; i < n; ++i) {
      bias += got[i] - exact[i];
      sq += (got[i] - exact[i]) * (got[i] - exact[i]);
      scale += exact[i] * exact[i];
    }
    const double rms_relative = std::sqrt(sq / scale);
    CHECK(rms_relative <= p * std::ldexp(1.0, -11));
    CHECK(rms_relative > 0);  // it does round
    // The bias of the mean over n elements is within 4 standard errors of zero.
    CHECK(std::abs(bias / n) <= 4 * std::sqrt(sq / n) / std::sqrt(static_cast<double>(n)));
  }
}

TEST_CASE("fp16 and bf16 under allreduce send half of dense's bytes at 4 and 8 workers; gather = true gathers",
          "[topology][transit]") {
  const std::size_t n = 20000;
  const auto run = [&](const std::string& compressor, bool gather, int p) {
    ComponentSpec spec{"compressor", compressor, {}};
    if (gather) spec.fields["gather"] = Value(true);
    return laconic::testing::allreduce_on_ranks(spec, p, n);
  };
  for (int p : {4, 8}) {
    INFO("p=" << p);
    const auto [dense, dense_mean] = run("none", false, p);
    for (const std::string name : {"fp16", "bf16"}) {
      INFO(name);
      const auto [half, half_mean] = run(name, false, p);
      const auto [gathered, gathered_mean] = run(name, true, p);
      for (int r = 0; r < p; ++r) {
        const auto u = static_cast<std::size_t>(r);
        CHECK(2 * half[u].bytes_sent == dense[u].bytes_sent);
        CHECK_FALSE(half[u].gathered);
        CHECK(half[u].bytes_dense == dense[u].bytes_dense);
        CHECK(half_mean[u] == half_mean[0]);
        // Gathered: p-1 payloads of 2n bytes each, more than dense's 2(p-1)/p x 4n from 4 workers.
        CHECK(gathered[u].gathered);
        CHECK(gathered[u].bytes_sent >= static_cast<std::uint64_t>(p - 1) * 2 * n);
        for (std::size_t i = 0; i < n; i += 97)
          CHECK(half_mean[u][i] == Approx(dense_mean[u][i]).margin(name == "fp16" ? 1e-4 : 1e-3));
      }
    }
  }
}
