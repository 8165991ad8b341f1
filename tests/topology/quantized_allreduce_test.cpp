// quantized_allreduce summed in the ring: each hop requantizes its partial sum. Nearest rounding
// against a plain reference that replays the ring's order bit for bit; stochastic rounding's
// error against the exact mean (unbiased, growing with the hops) with every rank ending with the
// same bits; its bytes a quarter (8 bits) or an eighth (4 bits) of dense's at 4 and 8 workers;
// the algorithms it refuses.
#include <catch2/catch.hpp>

#include <cmath>
#include <thread>

#include "engine/comm/memory_communicator.hpp"
#include "engine/comm/schedules.hpp"
#include "engine/compress/builtin.hpp"
#include "engine/compress/quantized_allreduce.hpp"
#include "engine/compress/random.hpp"
#include "engine/core/error.hpp"
#include "engine/topology/builtin.hpp"
#include "allreduce_ranks.hpp"

using namespace laconic;
using namespace std::chrono_literals;

namespace {

using Vectors = std::vector<std::vector<float>>;

Vectors gaussian_inputs(int p, std::size_t n, std::uint64_t seed) {
  Vectors x(static_cast<std::size_t>(p), std::vector<float>(n));
  compress::Rng rng(seed);
  for (auto& v : x)
    for (float& e : v) {
      const double u = std::max(static_cast<double>(rng.uniform()), 1e-12);
      e = static_cast<float>(std::sqrt(-2 * std::log(u)) * std::cos(2 * M_PI * rng.uniform()));
    }
  return x;
}

// Each rank's quantizer, seeded as a compressor of run seed 3 would seed its own.
std::vector<std::unique_ptr<compress::ChunkQuantizer>> quantizers(int p, unsigned bits, std::size_t chunk,
                                                                 compress::LevelRounding rounding) {
  std::vector<std::unique_ptr<compress::ChunkQuantizer>> out;
  for (int r = 0; r < p; ++r) {
    out.push_back(std::make_unique<compress::ChunkQuantizer>(bits, chunk, rounding));
    out.back()->stream().reseed(compress::derive_seed(3, compress::streams::kQuantizedRounding + r));
  }
  return out;
}

Vectors quantized_ring(const Vectors& x, const std::vector<std::unique_ptr<compress::ChunkQuantizer>>& codecs,
                       std::vector<comm::ByteCounters>* counters = nullptr) {
  const int p = static_cast<int>(x.size());
  comm::MemoryNetwork network(p, 20s);
  Vectors out = x;
  if (counters != nullptr) counters->assign(x.size(), {});
  std::vector<std::thread> threads;
  for (int r = 0; r < p; ++r)
    threads.emplace_back([&, r] {
      comm::MemoryCommunicator comm(network, r);
      comm.allreduce_sum_encoded(out[static_cast<std::size_t>(r)], *codecs[static_cast<std::size_t>(r)],
                                 comm::AllreduceAlgorithm::Auto);
      if (counters != nullptr) (*counters)[static_cast<std::size_t>(r)] = comm.counters();
    });
  for (auto& t : threads) t.join();
  return out;
}

// The ring's order replayed with nearest rounding: ring chunk c starts at rank c, quantized; rank
// c + 1 adds its own fp32 values to the decoded sum and quantizes again; ...; p quantizations.
std::vector<float> nearest_reference(const Vectors& x, const compress::ChunkQuantizer& q) {
  const int p = static_cast<int>(x.size());
  const std::size_t n = x[0].size();
  std::vector<float> sum(n);
  for (int c = 0; c < p; ++c) {
    const auto [b, e] = comm::detail::chunk(n, p, c);
    std::vector<float> partial(x[static_cast<std::size_t>(c)].begin() + b, x[static_cast<std::size_t>(c)].begin() + e);
    std::vector<std::uint8_t> scratch(q.bytes(partial.size()));
    q.round(partial, scratch);
    for (int hop = 1; hop < p; ++hop) {
      const auto& own = x[static_cast<std::size_t>((c + hop) % p)];
      for (std::size_t i = 0; i < partial.size(); ++i) partial[i] += own[b + i];
      q.round(partial, scratch);
    }
    std::copy(partial.begin(), partial.end(), sum.begin() + static_cast<std::ptrdiff_t>(b));
  }
  return sum;
}

struct Errors {
  double rms = 0, bias = 0, bias_bound = 0;
};

Errors errors_against_sum(const std::vector<float>& got, const Vectors& x) {
  const std::size_t n = got.size();
  double sq = 0, sum = 0, scale = 0;
  for (std::size_t i = 0; i < n; ++i) {
    double exact = 0;
    for (const auto& v : x) exact += v[i];
    sq += (got[i] - exact) * (got[i] - exact);
    sum += got[i] - exact;
    scale += exact * exact;
  }
  const double dn = static_cast<double>(n);
  return {std::sqrt(sq / scale), sum / dn, 4 * std::sqrt(sq / dn) / std::sqrt(dn)};
}

}  // namespace

TEST_CASE("the quantized ring with nearest rounding requantizes where the reference does, bit for bit",
          "[topology][transit][quantized]") {
  for (unsigned bits : {8u, 4u})
    for (int p : {2, 3, 5, 8}) {
      INFO("bits=" << bits << " p=" << p);
      const auto x = gaussian_inputs(p, 3001, 20 + static_cast<std::uint64_t>(p));
      const auto codecs = quantizers(p, bits, 256, compress::LevelRounding::Nearest);
      const auto got = quantized_ring(x, codecs);
      const auto want = nearest_reference(x, *codecs[0]);
      for (int r = 0; r < p; ++r) CHECK(got[static_cast<std::size_t>(r)] == want);
    }
}

TEST_CASE("the stochastic quantized ring: the same bits on every rank, no bias, an error that grows with the hops",
          "[topology][transit][quantized]") {
  const std::size_t n = 8192;
  for (unsigned bits : {8u, 4u}) {
    double previous = 0;
    for (int p : {2, 8, 32}) {
      INFO("bits=" << bits << " p=" << p);
      const auto x = gaussian_inputs(p, n, 40 + static_cast<std::uint64_t>(p));
      const auto got = quantized_ring(x, quantizers(p, bits, 1024, compress::LevelRounding::Stochastic));
      for (int r = 1; r < p; ++r) CHECK(got[static_cast<std::size_t>(r)] == got[0]);
      const Errors e = errors_against_sum(got[0], x);
      CHECK(std::abs(e.bias) <= e.bias_bound);
      // p quantizations, each of error below one level of a scale at most the partial sum's
      // largest magnitude (about 4 sigma of it for Gaussian sums) over the top level.
      const double top = (1 << (bits - 1)) - 1;
      CHECK(e.rms <= std::sqrt(static_cast<double>(p)) * 4.5 / top);
      CHECK(e.rms > previous);
      previous = e.rms;
    }
  }
}

TEST_CASE("quantized_allreduce under allreduce sends a quarter (8 bits) or an eighth (4 bits) of dense's bytes",
          "[topology][transit][quantized]") {
  const std::size_t n = 40000;
  const auto run = [&](const ComponentSpec& spec, int p, const std::string& algorithm) {
    return laconic::testing::allreduce_on_ranks(spec, p, n, algorithm);
  };
  for (int p : {4, 8}) {
    const auto [dense, dense_mean] = run({"compressor", "none", {}}, p, "auto");
    for (std::int64_t bits : {8, 4}) {
      INFO("p=" << p << " bits=" << bits);
      const auto [q, q_mean] = run({"compressor", "quantized_allreduce", {{"bits", bits}}}, p, "auto");
      const auto [gathered, gathered_mean] =
          run({"compressor", "quantized_allreduce", {{"bits", bits}, {"gather", true}}}, p, "auto");
      const double share = static_cast<double>(bits) / 32;
      for (int r = 0; r < p; ++r) {
        const auto u = static_cast<std::size_t>(r);
        const double ratio = static_cast<double>(q[u].bytes_sent) / static_cast<double>(dense[u].bytes_sent);
        CHECK(ratio >= share);
        CHECK(ratio <= share * 1.04);  // the scales: 4 bytes per 1024 elements of a message
        CHECK(q[u].bytes_dense == dense[u].bytes_dense);
        CHECK_FALSE(q[u].gathered);
        CHECK(q[u].payload_bytes == compress::chunk_quantized_bytes(n, static_cast<unsigned>(bits), 1024));
        CHECK(q_mean[u] == q_mean[0]);
        CHECK(gathered[u].gathered);
        CHECK(gathered[u].bytes_sent > q[u].bytes_sent * static_cast<std::uint64_t>(p - 1) / 2);
        const double level = 0.05 / ((1 << (bits - 1)) - 1);
        for (std::size_t i = 0; i < n; i += 97) CHECK(q_mean[u][i] == Approx(dense_mean[u][i]).margin(2 * level));
      }
    }
  }
}

TEST_CASE("quantized_allreduce refuses the allreduces that would encode a sum twice", "[topology][transit][quantized]") {
  auto c = compress::builtin_compressors().create({"compressor", "quantized_allreduce", {}});
  for (const std::string algorithm : {"halving_doubling", "one_shot"}) {
    auto topo = topology::builtin_topologies().create({"topology", "allreduce", {{"algorithm", algorithm}}});
    CHECK_THROWS_WITH(topo->check(*c), Catch::Contains("use allreduce { algorithm = \"ring\" }"));
  }
  for (const std::string algorithm : {"ring", "auto"})
    CHECK_NOTHROW(topology::builtin_topologies().create({"topology", "allreduce", {{"algorithm", algorithm}}})->check(*c));
  auto gathered = compress::builtin_compressors().create({"compressor", "quantized_allreduce", {{"gather", true}}});
  CHECK_NOTHROW(topology::builtin_topologies()
                    .create({"topology", "allreduce", {{"algorithm", std::string("one_shot")}}})
                    ->check(*gathered));
}
