#pragma once
// One allreduce exchange on p thread ranks over memory: each rank's compressor built from `spec`
// (seeded with run seed 9 and its rank) averages the same deterministic gradient pattern, offset
// by the rank. What the tests of the formats summed in transit compare against dense.
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "engine/comm/memory_communicator.hpp"
#include "engine/compress/builtin.hpp"
#include "engine/topology/builtin.hpp"

namespace laconic::testing {

/// Each rank's exchange statistics and averaged gradient, by rank.
inline std::pair<std::vector<topology::ExchangeStats>, std::vector<std::vector<float>>> allreduce_on_ranks(
    const ComponentSpec& spec, int p, std::size_t n, const std::string& algorithm = "auto") {
  comm::MemoryNetwork network(p, std::chrono::seconds(20));
  std::vector<topology::ExchangeStats> stats(static_cast<std::size_t>(p));
  std::vector<std::vector<float>> results(static_cast<std::size_t>(p));
  std::vector<std::thread> threads;
  for (int r = 0; r < p; ++r)
    threads.emplace_back([&, r] {
      comm::MemoryCommunicator comm(network, r);
      auto topo = topology::builtin_topologies().create({"topology", "allreduce", {{"algorithm", algorithm}}});
      auto c = compress::build_compressor(compress::builtin_compressors(), spec, {{n}}, {9, r});
      std::vector<float> g(n);
      for (std::size_t i = 0; i < n; ++i) g[i] = static_cast<float>(0.001 * ((i * 7 + r * 13) % 101) - 0.05);
      stats[static_cast<std::size_t>(r)] = topo->average(g, *c, comm);
      results[static_cast<std::size_t>(r)] = g;
    });
  for (auto& t : threads) t.join();
  return {stats, results};
}

}  // namespace laconic::testing
