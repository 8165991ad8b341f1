// How well the network model predicts loopback. Calibrates a Link on 2 ranks (latency = half the
// median round trip of a 4-byte ping-pong; bandwidth = 64 MiB / median time of a bulk transfer,
// one-way and full-duplex), then times ring allreduce_sum on 2 and 4 ranks and compares the
// measured time with each rank's traffic projected onto the calibrated link. Ranks are threads
// of this process, each with its own GlooCommunicator over TCP on 127.0.0.1. Prints Markdown.
//
// A plain program rather than Google Benchmark: every measurement needs all ranks to take part
// in lockstep, and the report is one table comparing two numbers per row.
#include <sys/resource.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <functional>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "bench/gloo_ranks.hpp"
#include "engine/comm/network.hpp"
#include "engine/core/error.hpp"

namespace {

using laconic::comm::ByteCounters;
using laconic::comm::Communicator;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kPingBytes = 4;
constexpr int kPingWarmup = 200;
constexpr int kPingRepetitions = 2000;
constexpr std::size_t kBulkBytes = 64u << 20;
constexpr int kBulkWarmup = 2;
constexpr int kBulkRepetitions = 9;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

double median(std::vector<double> v) {
  LACONIC_ENFORCE(!v.empty(), "median of no samples");
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 == 1 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

using laconic::bench::quantile;
using laconic::bench::run_ranks;
using laconic::bench::slowest_rank;

struct Calibration {
  std::vector<double> rtt;  ///< seconds of each 4-byte round trip, sorted
  double latency = 0;       ///< seconds one way: median round trip / 2
  /// Median seconds of one send_recv in which both ranks send and receive 4 bytes at once (the
  /// ring's pattern on 2 ranks): the per-message cost as the ring sees it.
  double exchange = 0;
  double one_way_seconds = 0;  ///< median seconds of 64 MiB from rank 0 to rank 1
  double duplex_seconds = 0;   ///< median seconds of 64 MiB each way in one send_recv
  double one_way_bits_per_s = 0;
  double duplex_bits_per_s = 0;  ///< per direction
};

/// Ping-pong, then bulk transfers, all on 2 ranks.
Calibration calibrate() {
  Calibration c;
  std::vector<double> rtt;
  std::vector<std::vector<double>> exchange(kPingRepetitions, std::vector<double>(2));
  std::vector<std::vector<double>> one_way(kBulkRepetitions, std::vector<double>(2));
  std::vector<std::vector<double>> duplex(kBulkRepetitions, std::vector<double>(2));
  run_ranks(2, [&](Communicator& comm) {
    const int me = comm.rank(), peer = 1 - me;
    std::vector<std::uint8_t> ping(kPingBytes, 1), pong(kPingBytes);
    // Rank 0 sends then receives, rank 1 receives then sends; rank 0 times the round trip.
    for (int i = 0; i < kPingWarmup + kPingRepetitions; ++i) {
      const auto start = Clock::now();
      if (me == 0) {
        comm.send_recv(peer, ping, peer, {});
        comm.send_recv(peer, {}, peer, pong);
      } else {
        comm.send_recv(peer, {}, peer, pong);
        comm.send_recv(peer, ping, peer, {});
      }
      if (me == 0 && i >= kPingWarmup) rtt.push_back(seconds_since(start));
    }
    for (int i = 0; i < kPingWarmup + kPingRepetitions; ++i) {
      const auto start = Clock::now();
      comm.send_recv(peer, ping, peer, pong);
      if (i >= kPingWarmup)
        exchange[static_cast<std::size_t>(i - kPingWarmup)][static_cast<std::size_t>(me)] = seconds_since(start);
    }
    std::vector<std::uint8_t> out(kBulkBytes, 2), in(kBulkBytes);
    for (int i = 0; i < kBulkWarmup + kBulkRepetitions; ++i) {
      comm.barrier();
      const auto start = Clock::now();
      if (me == 0)
        comm.send_recv(peer, out, peer, {});
      else
        comm.send_recv(peer, {}, peer, in);
      if (i >= kBulkWarmup)
        one_way[static_cast<std::size_t>(i - kBulkWarmup)][static_cast<std::size_t>(me)] = seconds_since(start);
    }
    for (int i = 0; i < kBulkWarmup + kBulkRepetitions; ++i) {
      comm.barrier();
      const auto start = Clock::now();
      comm.send_recv(peer, out, peer, in);
      if (i >= kBulkWarmup)
        duplex[static_cast<std::size_t>(i - kBulkWarmup)][static_cast<std::size_t>(me)] = seconds_since(start);
    }
  });
  std::sort(rtt.begin(), rtt.end());
  c.rtt = rtt;
  c.latency = median(rtt) / 2;
  c.exchange = median(slowest_rank(exchange));
  c.one_way_seconds = median(slowest_rank(one_way));
  c.duplex_seconds = median(slowest_rank(duplex));
  c.one_way_bits_per_s = 8.0 * static_cast<double>(kBulkBytes) / c.one_way_seconds;
  c.duplex_bits_per_s = 8.0 * static_cast<double>(kBulkBytes) / c.duplex_seconds;
  return c;
}

laconic::comm::Link make_link(double bits_per_second, double latency_seconds) {
  laconic::comm::LinkOptions o;
  o.bandwidth = laconic::str_cat(bits_per_second / 1e9, "Gbit");
  o.latency = laconic::str_cat(latency_seconds * 1e6, "us");
  o.bits_per_second = bits_per_second;
  o.latency_seconds = latency_seconds;
  o.payload_fraction = 1.0;  // the calibration measured payload bytes per second: no framing on top
  return laconic::comm::Link(o);
}

struct AllreduceRow {
  int ranks = 0;
  std::size_t floats = 0;
  int repetitions = 0;
  ByteCounters traffic;           ///< rank 0's counters over one call
  double measured = 0;            ///< median over repetitions of the slowest rank's seconds
  double measured_p10 = 0;        ///< 10th percentile of the same
  double measured_p90 = 0;        ///< 90th percentile of the same
  double projected = 0;           ///< slowest rank's projection on the calibrated link
  double projected_exchange = 0;  ///< the same with the 4-byte exchange time as latency
  double local_cpu = 0;           ///< seconds of the call's own arithmetic and allocation, one thread
};

/// The work allreduce_sum does besides moving bytes, replayed on one thread with nothing else
/// running: allocating the incoming buffer (n/p + 1 floats, zeroed) and p-1 chunk additions.
double local_cpu_seconds(std::size_t n, int p, int repetitions) {
  std::vector<float> data(n, 1.0f);
  std::vector<double> seconds;
  const std::size_t chunk = n / static_cast<std::size_t>(p);
  for (int i = 0; i < repetitions; ++i) {
    const auto start = Clock::now();
    std::vector<float> incoming(chunk + 1);
    for (int s = 0; s < p - 1; ++s) {
      float* dst = data.data() + static_cast<std::size_t>(s) * chunk;
      for (std::size_t j = 0; j < chunk; ++j) dst[j] += incoming[j];
    }
    seconds.push_back(seconds_since(start));
    if (data[n / 2] < 0) std::puts("");  // keeps the additions observable
  }
  return median(seconds);
}

AllreduceRow time_allreduce(int p, std::size_t n, int repetitions, const laconic::comm::Link& link,
                            const laconic::comm::Link& exchange_link) {
  constexpr int kWarmup = 2;
  AllreduceRow row;
  row.ranks = p;
  row.floats = n;
  row.repetitions = repetitions;
  std::vector<std::vector<double>> seconds(static_cast<std::size_t>(repetitions),
                                           std::vector<double>(static_cast<std::size_t>(p)));
  std::vector<ByteCounters> traffic(static_cast<std::size_t>(p));
  run_ranks(p, [&](Communicator& comm) {
    const auto me = static_cast<std::size_t>(comm.rank());
    std::vector<float> data(n);
    for (int i = 0; i < kWarmup + repetitions; ++i) {
      // Refilled outside the timed region so sums never grow towards inf.
      std::fill(data.begin(), data.end(), 1.0f);
      comm.barrier();
      const ByteCounters before = comm.counters();
      const auto start = Clock::now();
      comm.allreduce_sum(data);
      const double elapsed = seconds_since(start);
      traffic[me] = comm.counters().since(before);
      if (i >= kWarmup) seconds[static_cast<std::size_t>(i - kWarmup)][me] = elapsed;
    }
    LACONIC_ENFORCE(data[0] == static_cast<float>(p), "allreduce of 1.0 on ", p, " ranks expected ", p, ", got ",
                    data[0]);
  });
  const auto slowest = slowest_rank(seconds);
  row.measured = median(slowest);
  row.measured_p10 = quantile(slowest, 0.1);
  row.measured_p90 = quantile(slowest, 0.9);
  row.traffic = traffic[0];
  for (const auto& t : traffic) {
    row.projected = std::max(row.projected, link.project(t));
    row.projected_exchange = std::max(row.projected_exchange, exchange_link.project(t));
  }
  row.local_cpu = local_cpu_seconds(n, p, std::min(repetitions, 5));
  return row;
}

std::string ms(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, seconds < 0.01 ? "%.3f" : "%.1f", seconds * 1e3);
  return buf;
}

std::string fixed(double value, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, value);
  return buf;
}

std::string size_label(std::size_t floats) {
  if (floats >= (1u << 20)) return laconic::str_cat(floats >> 20, " M");
  if (floats >= (1u << 10)) return laconic::str_cat(floats >> 10, " K");
  return laconic::str_cat(floats);
}

double share_at_least(const std::vector<double>& sorted, double threshold) {
  const auto it = std::lower_bound(sorted.begin(), sorted.end(), threshold);
  return static_cast<double>(sorted.end() - it) / static_cast<double>(sorted.size());
}

void print_calibration(const Calibration& c) {
  const auto& r = c.rtt;
  auto us = [](double seconds) { return fixed(seconds * 1e6, 1); };
  std::cout << "## Loopback calibration (2 ranks)\n\n"
            << "| quantity | value |\n|---|---|\n"
            << "| round trip, " << kPingBytes << " B ping-pong (send_recv with one side empty), " << kPingRepetitions
            << " after " << kPingWarmup << " warm-up: p10 / p25 / median / p75 / p90 | " << us(quantile(r, 0.1))
            << " / " << us(quantile(r, 0.25)) << " / " << us(median(r)) << " / " << us(quantile(r, 0.75)) << " / "
            << us(quantile(r, 0.9)) << " us |\n"
            << "| share of round trips >= 1 ms | " << fixed(100 * share_at_least(r, 1e-3), 1) << " % |\n"
            << "| **latency** = median round trip / 2 | **" << us(c.latency) << " us** |\n"
            << "| " << kPingBytes << " B each way in one send_recv (the ring's pattern), median "
            << "of " << kPingRepetitions << ", slowest rank | " << us(c.exchange) << " us |\n"
            << "| 64 MiB one-way (rank 0 sends, rank 1 receives), median of " << kBulkRepetitions << ", slowest rank | "
            << ms(c.one_way_seconds) << " ms = " << fixed(c.one_way_bits_per_s / 1e9, 2) << " Gbit/s |\n"
            << "| 64 MiB each way in one send_recv (full duplex), median of " << kBulkRepetitions << ", slowest rank | "
            << ms(c.duplex_seconds) << " ms = **" << fixed(c.duplex_bits_per_s / 1e9, 2)
            << " Gbit/s** per direction |\n\n"
            << "Bandwidth is 64 MiB / median time (latency not subtracted: it is below 10% of "
               "either transfer). The model charges a send_recv max(bytes sent, bytes received), "
               "i.e. assumes both directions run at full rate at once, and every send_recv of "
               "the ring sends and receives; so the link below uses the **full-duplex** "
               "bandwidth (on loopback both directions share the same CPUs, which is why it is "
               "about half the one-way figure). As an experiment field:\n\n"
            << "    network = link { bandwidth = \"" << fixed(c.duplex_bits_per_s / 1e9, 2) << "Gbit\", latency = \""
            << us(c.latency) << "us\" }\n\n";
}

void print_allreduce(const std::vector<AllreduceRow>& rows) {
  std::cout << "## Ring allreduce_sum: measured vs projected\n\n"
            << "Measured: median over repetitions (each after a barrier, 2 warm-up calls first) "
               "of the slowest rank's time inside the call; p10-p90 in brackets. Projected: the "
               "slowest rank's counters for one call on the calibrated link (messages x latency "
               "+ 8 x link_bytes / bandwidth). The second projection uses the 4-byte exchange "
               "time as the latency instead. Local CPU: the call's buffer allocation and "
               "additions replayed alone on one thread; the model does not charge it.\n\n"
            << "| ranks | floats | messages / rank | MiB sent / rank | measured ms (p10-p90) "
               "| projected ms | measured / projected | projected ms, exchange latency "
               "| measured / projected | local CPU ms | reps |\n"
            << "|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : rows)
    std::cout << "| " << r.ranks << " | " << size_label(r.floats) << " | " << r.traffic.messages << " | "
              << fixed(static_cast<double>(r.traffic.sent) / (1 << 20), 3) << " | " << ms(r.measured) << " ("
              << ms(r.measured_p10) << "-" << ms(r.measured_p90) << ") | " << ms(r.projected) << " | "
              << fixed(r.measured / r.projected, 2) << " | " << ms(r.projected_exchange) << " | "
              << fixed(r.measured / r.projected_exchange, 2) << " | " << ms(r.local_cpu) << " | " << r.repetitions
              << " |\n";
  std::cout << "\n";
}

}  // namespace

int main() {
  try {
    const auto start = Clock::now();
    const unsigned cores = std::thread::hardware_concurrency();
    std::cout << "# Network model vs loopback\n\n"
              << "Ranks are threads of one process, each with its own GlooCommunicator (Gloo TCP "
                 "on 127.0.0.1, each with its own I/O thread), on a machine with "
              << cores << " hardware threads. "
              << "With 4 ranks on " << cores
              << " cores, the ranks' reduction arithmetic and "
                 "Gloo's I/O threads compete for CPU, so loopback is CPU-bound and measured "
                 "times include that contention, which the model does not represent.\n\n";
    const Calibration c = calibrate();
    print_calibration(c);
    const auto link = make_link(c.duplex_bits_per_s, c.latency);
    const auto exchange_link = make_link(c.duplex_bits_per_s, c.exchange);
    struct Case {
      std::size_t floats;
      int repetitions;
    };
    const std::vector<Case> cases = {
        {1u << 10, 300}, {32u << 10, 100}, {256u << 10, 40}, {4u << 20, 15}, {16u << 20, 7}};
    std::vector<AllreduceRow> rows;
    for (int p : {2, 4})
      for (const auto& k : cases) rows.push_back(time_allreduce(p, k.floats, k.repetitions, link, exchange_link));
    print_allreduce(rows);
    // Process CPU time against wall time shows how busy the cores were (Gloo's I/O threads
    // poll in the kernel while waiting).
    rusage usage{};
    ::getrusage(RUSAGE_SELF, &usage);
    auto tv = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * t.tv_usec; };
    std::cout << "Run time " << fixed(seconds_since(start), 1) << " s wall; process CPU "
              << fixed(tv(usage.ru_utime), 1) << " s user + " << fixed(tv(usage.ru_stime), 1) << " s system.\n";
  } catch (const std::exception& e) {
    std::cerr << "laconic_network_model_bench: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
