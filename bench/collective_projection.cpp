// laconic's projection of one collective onto a link, for scripts that model another system's
// exchanges (bench/grace_ranking.py): runs the collective for real among WORKERS ranks that are
// threads of this process (MemoryCommunicator: the same collectives, bytes and messages as over
// Gloo), takes rank 0's counters and projects them with the link model (engine/core/units.hpp,
// docs/network-model.md). One request per input line, one answer per output line:
//
//   in:  LINK WORKERS KIND SIZE      e.g. "10Gbit,50us 4 allreduce 272474"
//   out: MESSAGES LINK_BYTES SECONDS
//
// KIND: allreduce (SIZE floats, the algorithm laconic chooses: choose_allreduce), allgather
// (SIZE bytes from every rank, no round of sizes) or allgatherv (the same with a round of sizes,
// as a sender of payloads of any size does). A malformed line ends the program with exit code 2.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "engine/comm/memory_communicator.hpp"
#include "engine/core/units.hpp"

namespace {

using laconic::comm::ByteCounters;
using laconic::comm::Communicator;

constexpr std::chrono::milliseconds kReceiveTimeout{60'000};

void run_collective(Communicator& comm, const std::string& kind, std::size_t size) {
  if (kind == "allreduce") {
    std::vector<float> data(size, 1.0f);
    comm.allreduce_sum(data, laconic::comm::AllreduceAlgorithm::Auto);
  } else {
    const std::vector<std::uint8_t> payload(size, 1);
    if (kind == "allgather")
      comm.allgather_same_size(payload);
    else
      comm.allgatherv(payload);
  }
}

/// Rank 0's traffic in one `kind` collective of `size` among `workers` thread ranks.
ByteCounters counters_of(int workers, const std::string& kind, std::size_t size) {
  laconic::comm::MemoryNetwork network(workers, kReceiveTimeout);
  std::vector<ByteCounters> counters(static_cast<std::size_t>(workers));
  std::vector<std::exception_ptr> failures(static_cast<std::size_t>(workers));
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < workers; ++rank)
    ranks.emplace_back([&, rank] {
      try {
        laconic::comm::MemoryCommunicator comm(network, rank);
        run_collective(comm, kind, size);
        counters[static_cast<std::size_t>(rank)] = comm.counters();
      } catch (...) {
        failures[static_cast<std::size_t>(rank)] = std::current_exception();
        network.abort("a rank failed");
      }
    });
  for (auto& rank : ranks) rank.join();
  for (const auto& failure : failures)
    if (failure) std::rethrow_exception(failure);
  return counters.front();
}

bool answer(const std::string& line) {
  std::istringstream in(line);
  std::string link_text, kind;
  int workers = 0;
  std::size_t size = 0;
  if (!(in >> link_text >> workers >> kind >> size) || workers < 1 || workers > 1024 ||
      (kind != "allreduce" && kind != "allgather" && kind != "allgatherv")) {
    std::cerr << "laconic_collective_projection: expected 'LINK WORKERS allreduce|allgather|allgatherv SIZE', got '"
              << line << "'\n";
    return false;
  }
  const laconic::LinkSpec link = laconic::parse_link(link_text);
  const ByteCounters c = counters_of(workers, kind, size);
  std::printf("%llu %llu %.9g\n", static_cast<unsigned long long>(c.messages),
              static_cast<unsigned long long>(c.link_bytes),
              link.project(static_cast<double>(c.messages), static_cast<double>(c.link_bytes)));
  std::fflush(stdout);
  return true;
}

}  // namespace

int main() {
  try {
    for (std::string line; std::getline(std::cin, line);) {
      if (line.empty()) continue;
      if (!answer(line)) return 2;
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "laconic_collective_projection: " << e.what() << "\n";
    return 1;
  }
}
