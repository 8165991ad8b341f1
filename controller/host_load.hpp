#pragma once
// How busy the host was while a run trained: the CPU time of the whole host (/proc/stat) less
// this controller's and its workers' own, so that a run whose ranks had to share their cores
// with other processes (or with a hypervisor's other guests: steal) is known as such.
#include <optional>
#include <string>

namespace laconic::controller {

/// The host's cores (at least 1).
int host_cores();

/// The cores this process may run on, "0,1" (its workers inherit them); "?" when unknown.
std::string affinity_text();

/// The 1-minute load average, "0.52"; "unknown" where the system cannot say.
std::string load_average_text();

/// The host's and this process tree's CPU time at one moment.
struct CpuSample {
  double busy = -1;   ///< s of every CPU not idle since boot (user, nice, system, irq, softirq); -1 unknown
  double steal = -1;  ///< s taken by the hypervisor from this guest's CPUs; -1 unknown
  double own = 0;     ///< s of this process and its children that were waited for (getrusage)
  double wall = 0;    ///< s on the steady clock
};

/// Now.
CpuSample sample_cpu();

/// The busy and stolen seconds of /proc/stat's aggregate "cpu" line, given its clock ticks per
/// second; nullopt when `text` has no such line.
std::optional<CpuSample> parse_proc_stat(const std::string& text, double ticks_per_second);

/// What the host carried between two samples.
struct HostLoad {
  double other_cores = 0;  ///< cores kept busy on average by other processes
  double steal_cores = 0;  ///< cores taken by the hypervisor on average
  double demand = 0;       ///< ranks + other_cores + steal_cores
  bool busy = false;       ///< demand above kBusyHostShare x cores
  bool known = false;      ///< false when /proc/stat could not be read
};

/// A host whose demand exceeds its cores by more than this share made its ranks wait for a core.
inline constexpr double kBusyHostShare = 1.1;

/// The load between `start` and `end` for a run with `ranks` ranks on this host of `cores` cores.
HostLoad host_load_between(const CpuSample& start, const CpuSample& end, int ranks, int cores);

}  // namespace laconic::controller
