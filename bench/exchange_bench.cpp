// One exchange on 2 ranks, by algorithm: ring, halving-doubling and one-shot allreduce of
// LeNet-5's gradient (61,706 floats, 247 KB) and the MLP's (327,880 floats, 1.3 MB), and what
// measuring the wait costs: a barrier (the 4-byte allreduce each step paid before) against the
// shared arrival board (ranks on one host) and the stamps beside each message with which ranks on
// several hosts measure it (the one-shot allreduce with and without them). Ranks are threads of
// this process, each with its own GlooCommunicator (TCP on 127.0.0.1); the algorithms are
// interleaved within every repetition. Prints Markdown.
//
// usage: laconic_exchange_bench [REPETITIONS]   (default 300)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "bench/gloo_ranks.hpp"
#include "engine/comm/communicator.hpp"
#include "engine/comm/stamped_arrival_board.hpp"
#include "engine/core/rank_clock.hpp"

namespace {

using laconic::comm::AllreduceAlgorithm;
using laconic::comm::Communicator;
using Clock = std::chrono::steady_clock;

constexpr int kRanks = 2;
constexpr int kWarmup = 10;

struct Method {
  std::string name;
  std::function<void(Communicator&, std::vector<float>&, laconic::comm::ArrivalBoard& stamped)> run;
};

struct Row {
  std::string vector, method;
  std::uint64_t messages = 0, bytes_sent = 0;  // rank 0, one call
  std::vector<std::vector<double>> seconds;    // repetition x rank
};

std::vector<Method> methods() {
  auto sum = [](AllreduceAlgorithm a) {
    return [a](Communicator& comm, std::vector<float>& data, laconic::comm::ArrivalBoard&) {
      comm.allreduce_sum(data, a);
    };
  };
  return {
      {"ring allreduce", sum(AllreduceAlgorithm::Ring)},
      {"halving-doubling allreduce", sum(AllreduceAlgorithm::HalvingDoubling)},
      {"one-shot allreduce (auto's choice for 2 ranks)", sum(AllreduceAlgorithm::OneShot)},
      {"wait measured by a barrier (before)",
       [](Communicator& comm, std::vector<float>&, laconic::comm::ArrivalBoard&) { comm.barrier(); }},
      {"wait measured on the arrival board (one host)",
       [](Communicator& comm, std::vector<float>&, laconic::comm::ArrivalBoard&) {
         comm.arrivals()->arrive(laconic::rank_seconds());
         (void)comm.arrivals()->latest();
       }},
      {"one-shot allreduce with arrival stamps (several hosts)",
       [](Communicator& comm, std::vector<float>& data, laconic::comm::ArrivalBoard& stamped) {
         stamped.arrive(laconic::rank_seconds());
         comm.allreduce_sum(data, AllreduceAlgorithm::OneShot);
         (void)stamped.latest();
       }},
  };
}

void measure(const std::string& label, std::size_t floats, int repetitions, std::vector<Row>& rows) {
  const auto all = methods();
  const std::size_t first = rows.size();
  for (const auto& m : all) {
    Row row;
    row.vector = label;
    row.method = m.name;
    row.seconds.assign(static_cast<std::size_t>(repetitions), std::vector<double>(kRanks));
    rows.push_back(std::move(row));
  }
  laconic::bench::run_ranks(kRanks, [&](Communicator& comm) {
    LACONIC_ENFORCE(comm.arrivals() != nullptr, "no arrival board between ranks of one process");
    laconic::comm::StampedArrivalBoard stamped(comm, [] { return laconic::rank_seconds(); });
    const auto me = static_cast<std::size_t>(comm.rank());
    std::vector<float> data(floats);
    for (int i = 0; i < kWarmup + repetitions; ++i)
      for (std::size_t k = 0; k < all.size(); ++k) {
        std::fill(data.begin(), data.end(), 1.0f);
        comm.barrier();  // both ranks start together
        const auto before = comm.counters();
        const auto start = Clock::now();
        all[k].run(comm, data, stamped);
        const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
        Row& row = rows[first + k];
        if (me == 0) {
          const auto traffic = comm.counters().since(before);
          row.messages = traffic.messages;
          row.bytes_sent = traffic.sent;
        }
        if (i >= kWarmup) row.seconds[static_cast<std::size_t>(i - kWarmup)][me] = elapsed;
      }
  });
}

std::string us(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", seconds * 1e6);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const int repetitions = argc > 1 ? std::max(1, std::atoi(argv[1])) : 300;
    std::vector<Row> rows;
    measure("247 KB (LeNet-5)", 61706, repetitions, rows);
    measure("1.3 MB (MLP)", 327880, repetitions, rows);
    std::cout << "## One exchange on " << kRanks << " ranks (loopback)\n\n"
              << "Median over " << repetitions << " repetitions (after " << kWarmup
              << " warm-up, methods interleaved, each after a barrier) of the slower rank's time inside the call; "
                 "p10-p90 in brackets. Messages and bytes: rank 0's counters for one call (a barrier's are "
                 "its 4-byte allreduce; the board sends none; stamps are not counted).\n\n"
              << "| vector | method | messages / rank | bytes sent / rank | median us (p10-p90) |\n"
              << "|---|---|---|---|---|\n";
    for (const auto& r : rows) {
      const auto slowest = laconic::bench::slowest_rank(r.seconds);
      std::cout << "| " << r.vector << " | " << r.method << " | " << r.messages << " | " << r.bytes_sent << " | "
                << us(laconic::bench::quantile(slowest, 0.5)) << " (" << us(laconic::bench::quantile(slowest, 0.1))
                << "-" << us(laconic::bench::quantile(slowest, 0.9)) << ") |\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "laconic_exchange_bench: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
