// Topologies over real Gloo ranks (threads): allreduce and allgather give every worker the same
// mean, allgather gathers even summable payloads, bytes follow the ring schedules, and a
// compressor a topology cannot run is refused before training.
#include <algorithm>
#include <cmath>
#include <mutex>
#include <thread>

#include <catch2/catch.hpp>

#include "engine/compress/builtin.hpp"
#include "engine/compress/topk.hpp"
#include "engine/core/error.hpp"
#include "engine/topology/builtin.hpp"
#include "engine/topology/gossip.hpp"
#include "rank_threads.hpp"

using namespace laconic;

namespace {

std::vector<float> pattern_gradient_of(int rank, std::size_t n) {
  std::vector<float> g(n);
  for (std::size_t i = 0; i < n; ++i) g[i] = static_cast<float>((rank + 1) * 0.25 + static_cast<double>(i % 7) - 3.0);
  return g;
}

struct Outcome {
  std::vector<std::vector<float>> results;
  std::vector<topology::ExchangeStats> stats;
};

Outcome exchange(const std::string& topology, const std::string& compressor, int ranks, std::size_t n) {
  Outcome out;
  out.results.resize(static_cast<std::size_t>(ranks));
  out.stats.resize(static_cast<std::size_t>(ranks));
  testing::run_ranks(ranks, std::chrono::seconds(30), [&](comm::Communicator& comm) {
    auto topo = topology::builtin_topologies().create({"topology", topology, {}});
    auto c = compress::builtin_compressors().create({"compressor", compressor, {}});
    c->set_seed(1, comm.rank());
    auto g = pattern_gradient_of(comm.rank(), n);
    auto stats = topo->average(g, *c, comm);
    out.results[static_cast<std::size_t>(comm.rank())] = g;
    out.stats[static_cast<std::size_t>(comm.rank())] = stats;
  });
  return out;
}

}  // namespace

TEST_CASE("allreduce and allgather give every worker the mean of the dense gradients", "[topology]") {
  constexpr int kRanks = 3;
  constexpr std::size_t n = 1000;
  const auto reduced = exchange("allreduce", "none", kRanks, n);
  const auto gathered = exchange("allgather", "none", kRanks, n);
  for (int r = 0; r < kRanks; ++r) {
    CHECK(reduced.results[static_cast<std::size_t>(r)] == reduced.results[0]);
    CHECK(gathered.results[static_cast<std::size_t>(r)] == gathered.results[0]);
    CHECK_FALSE(reduced.stats[static_cast<std::size_t>(r)].gathered);
    CHECK(gathered.stats[static_cast<std::size_t>(r)].gathered);
    // Ring allgatherv: p-1 forwarded sizes of 8 bytes, then p-1 forwarded payloads of 4n.
    CHECK(gathered.stats[static_cast<std::size_t>(r)].bytes_sent == (kRanks - 1) * (8 + 4 * n));
    // The default algorithm (auto): the one-shot exchange for 4 KB among 3 ranks.
    CHECK(reduced.stats[static_cast<std::size_t>(r)].bytes_sent ==
          comm::allreduce_bytes_sent(n, kRanks, r, comm::AllreduceAlgorithm::Auto));
    CHECK(reduced.stats[static_cast<std::size_t>(r)].bytes_sent == comm::one_shot_bytes_sent(n, kRanks));
  }
  for (std::size_t i = 0; i < n; ++i) {
    double mean = 0;
    for (int r = 0; r < kRanks; ++r) mean += pattern_gradient_of(r, n)[i] / kRanks;
    CHECK(reduced.results[0][i] == Approx(mean).margin(1e-6));
    CHECK(gathered.results[0][i] == Approx(mean).margin(1e-6));
  }
}

TEST_CASE("topk through allreduce and allgather is the same gather", "[topology]") {
  const auto a = exchange("allreduce", "topk", 2, 5000);
  const auto b = exchange("allgather", "topk", 2, 5000);
  CHECK(a.results[0] == b.results[0]);
  CHECK(a.stats[0].bytes_sent == b.stats[0].bytes_sent);
  CHECK(a.stats[0].payload_bytes == compress::topk_payload_bytes(50));
}

TEST_CASE("allgather refuses a compressor that runs its own allreduces", "[topology]") {
  auto topo = topology::builtin_topologies().create({"topology", "allgather", {}});
  auto powersgd = compress::builtin_compressors().create({"compressor", "powersgd", {}});
  CHECK_THROWS_WITH(topo->check(*powersgd), "powersgd runs its own allreduces; use topology = allreduce()");
  auto ring = topology::builtin_topologies().create({"topology", "allreduce", {}});
  CHECK_NOTHROW(ring->check(*powersgd));
}

namespace {

/// sqrt(mean over ranks of ||x_r - mean||^2).
double consensus(const std::vector<std::vector<float>>& models) {
  const std::size_t n = models[0].size();
  double total = 0;
  for (std::size_t i = 0; i < n; ++i) {
    double mean = 0;
    for (const auto& m : models) mean += m[i] / static_cast<double>(models.size());
    for (const auto& m : models) total += (m[i] - mean) * (m[i] - mean);
  }
  return std::sqrt(total / static_cast<double>(models.size()));
}

/// Runs `steps` gossip rounds on `ranks` workers; models[step][rank] after each round.
std::vector<std::vector<std::vector<float>>> gossip_rounds(const std::string& peers, int ranks, std::int64_t neighbours,
                                                           int steps) {
  constexpr std::size_t n = 500;
  std::vector<std::vector<std::vector<float>>> history(
      static_cast<std::size_t>(steps + 1), std::vector<std::vector<float>>(static_cast<std::size_t>(ranks)));
  testing::run_ranks(ranks, std::chrono::seconds(30), [&](comm::Communicator& comm) {
    auto topo =
        topology::builtin_topologies().create({"topology", "gossip", {{"peers", peers}, {"neighbours", neighbours}}});
    auto none = compress::builtin_compressors().create({"compressor", "none", {}});
    REQUIRE(topo->mixes_models());
    std::vector<float> model(n);
    for (std::size_t i = 0; i < n; ++i)
      model[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i) * (comm.rank() + 1)));
    const auto r = static_cast<std::size_t>(comm.rank());
    history[0][r] = model;
    for (int s = 1; s <= steps; ++s) {
      const auto stats = topo->average(model, *none, comm);
      CHECK(stats.bytes_sent == static_cast<std::uint64_t>(neighbours) * n * 4);
      history[static_cast<std::size_t>(s)][r] = model;
    }
  });
  return history;
}

}  // namespace

TEST_CASE(
    "gossip on a ring keeps the mean and shrinks the consensus distance by the mixing "
    "matrix's second eigenvalue",
    "[topology][gossip]") {
  // 4 workers, neighbours +1 and -1, weights 1/3: the circulant's other eigenvalues are
  // (1 + 2 cos(2 pi j / 4)) / 3 = 1/3, -1/3, 1/3, so each round shrinks the distance by 3.
  const auto history = gossip_rounds("ring", 4, 2, 8);
  for (std::size_t s = 1; s < history.size(); ++s) {
    CHECK(consensus(history[s]) <= consensus(history[s - 1]) / 3 * (1 + 1e-4) + 1e-6);
    for (std::size_t i = 0; i < history[0][0].size(); i += 50) {
      double before = 0, after = 0;
      for (int r = 0; r < 4; ++r) {
        before += history[0][static_cast<std::size_t>(r)][i];
        after += history[s][static_cast<std::size_t>(r)][i];
      }
      CHECK(after == Approx(before).margin(1e-4));
    }
  }
  CHECK(consensus(history.back()) < 1e-3 * consensus(history.front()));
}

TEST_CASE("gossip with random peers also converges to the mean", "[topology][gossip]") {
  const auto history = gossip_rounds("random", 4, 1, 30);
  CHECK(consensus(history.back()) < 0.05 * consensus(history.front()));
}

TEST_CASE("gossip offsets: ring order, distinct random ones, and the range of neighbours", "[topology][gossip]") {
  topology::GossipOptions ring;
  ring.neighbours = 3;
  CHECK(topology::gossip_offsets(ring, 5, 0) == std::vector<int>{1, 4, 2});
  topology::GossipOptions random = ring;
  random.peers = topology::GossipPeers::Random;
  for (std::uint64_t step = 0; step < 20; ++step) {
    auto offsets = topology::gossip_offsets(random, 6, step);
    std::sort(offsets.begin(), offsets.end());
    CHECK(std::adjacent_find(offsets.begin(), offsets.end()) == offsets.end());
    CHECK(offsets.front() >= 1);
    CHECK(offsets.back() <= 5);
  }
  CHECK_THROWS_WITH(topology::gossip_offsets(ring, 3, 0),
                    "gossip.neighbours must be in [1, workers - 1] = [1, 2], got 3");
  auto gossip = topology::builtin_topologies().create({"topology", "gossip", {}});
  auto topk = compress::builtin_compressors().create({"compressor", "topk", {}});
  CHECK_THROWS_WITH(gossip->check(*topk),
                    "gossip exchanges whole models in fp32; compressor 'topk' is not supported "
                    "with it (use none())");
}

namespace {

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// Rank 0's time_wait and time_communicate, calm rounds and rounds where rank 1 sleeps `delay`
// before the exchange, interleaved: whatever else the machine does disturbs both kinds alike.
struct Waits {
  std::vector<double> calm_wait, calm_communicate, wait, communicate;
};

Waits waits(std::chrono::milliseconds delay, int rounds_each, bool stamped_arrivals) {
  Waits w;
  testing::run_ranks(
      2, std::chrono::seconds(30),
      [&](comm::Communicator& comm) {
        auto topo = topology::builtin_topologies().create({"topology", "allreduce", {}});
        auto c = compress::builtin_compressors().create({"compressor", "none", {}});
        for (int i = 0; i < 2 * rounds_each; ++i) {
          const bool straggled = i % 2 == 1;
          auto g = pattern_gradient_of(comm.rank(), 100'000);
          if (comm.rank() == 1 && straggled) std::this_thread::sleep_for(delay);
          const auto stats = topo->average(g, *c, comm);
          CHECK(stats.measured_wait);
          if (comm.rank() == 0) {
            (straggled ? w.wait : w.calm_wait).push_back(stats.time_wait);
            (straggled ? w.communicate : w.calm_communicate).push_back(stats.time_communicate);
          }
        }
      },
      true, [&](comm::GlooOptions& options) { options.stamped_arrivals = stamped_arrivals; });
  return w;
}

}  // namespace

TEST_CASE("a straggler's delay shows as the others' waiting, not as their communication", "[topology][wait]") {
  // On one host's shared board, and with the stamps ranks on several hosts send.
  const bool stamped = GENERATE(false, true);
  const Waits w = waits(std::chrono::milliseconds(20), 15, stamped);
  INFO("stamped arrivals: " << stamped);
  INFO("medians, calm: wait " << median(w.calm_wait) << " s, communicate " << median(w.calm_communicate)
                              << " s; with a 20 ms straggler: wait " << median(w.wait) << " s, communicate "
                              << median(w.communicate) << " s");
  // Tolerances: 20 ms of sleep shows as 15-40 ms of waiting on a shared 2-core machine; the
  // collective itself (400 kB on loopback) stays within 5 ms of its calm time.
  CHECK(median(w.wait) - median(w.calm_wait) > 0.015);
  CHECK(median(w.wait) - median(w.calm_wait) < 0.040);
  CHECK(median(w.communicate) < median(w.calm_communicate) + 0.005);
}
