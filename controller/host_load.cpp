#include "controller/host_load.hpp"

#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "reports/format.hpp"

namespace laconic::controller {
namespace {

double seconds_of(const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; }

double rusage_seconds(int who) {
  rusage usage{};
  if (::getrusage(who, &usage) != 0) return 0;
  return seconds_of(usage.ru_utime) + seconds_of(usage.ru_stime);
}

}  // namespace

std::optional<CpuSample> parse_proc_stat(const std::string& text, double ticks_per_second) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string name;
    fields >> name;
    if (name != "cpu") continue;
    // user nice system idle iowait irq softirq steal guest guest_nice; guest time is already in user.
    double value[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int read = 0;
    while (read < 8 && fields >> value[read]) ++read;
    if (read < 4 || ticks_per_second <= 0) return std::nullopt;
    CpuSample sample;
    sample.busy = (value[0] + value[1] + value[2] + value[5] + value[6]) / ticks_per_second;
    sample.steal = value[7] / ticks_per_second;
    return sample;
  }
  return std::nullopt;
}

CpuSample sample_cpu() {
  CpuSample sample;
  std::ifstream in("/proc/stat");
  std::stringstream text;
  text << in.rdbuf();
  if (const auto parsed = parse_proc_stat(text.str(), static_cast<double>(::sysconf(_SC_CLK_TCK)))) sample = *parsed;
  sample.own = rusage_seconds(RUSAGE_SELF) + rusage_seconds(RUSAGE_CHILDREN);
  sample.wall = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  return sample;
}

HostLoad host_load_between(const CpuSample& start, const CpuSample& end, int ranks, int cores) {
  HostLoad load;
  const double wall = end.wall - start.wall;
  if (start.busy < 0 || end.busy < 0 || wall <= 0) return load;
  load.known = true;
  // /proc/stat counts in ticks (10 ms) and our own time in microseconds: a short run can come out
  // a little below zero, which is none.
  load.other_cores = std::max(0.0, (end.busy - start.busy) - (end.own - start.own)) / wall;
  load.steal_cores = std::max(0.0, end.steal - start.steal) / wall;
  load.demand = ranks + load.other_cores + load.steal_cores;
  load.busy = load.demand > kBusyHostShare * std::max(1, cores);
  return load;
}

int host_cores() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

std::string affinity_text() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return "?";
  std::string out;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) out += (out.empty() ? "" : ",") + std::to_string(cpu);
  return out;
}

std::string load_average_text() {
  double load[1];
  if (::getloadavg(load, 1) != 1) return "unknown";
  return reports::fixed(load[0], 2);
}

}  // namespace laconic::controller
