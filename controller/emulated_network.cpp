#include "controller/emulated_network.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "controller/worker_processes.hpp"
#include "engine/comm/link_trace.hpp"
#include "engine/core/error.hpp"

extern char** environ;

namespace laconic::controller {
namespace {

constexpr const char* kNetnsDir = "/run/netns";

/// `tool` (ip, tc) in PATH or the sbin directories root's PATH has and a user's may not.
std::string find_tool(const std::string& tool) {
  std::vector<std::string> dirs;
  if (const char* path = std::getenv("PATH")) {
    std::string all = path;
    for (std::size_t at = 0; at <= all.size();) {
      const std::size_t end = std::min(all.find(':', at), all.size());
      if (end > at) dirs.push_back(all.substr(at, end - at));
      at = end + 1;
    }
  }
  for (const char* d : {"/usr/sbin", "/sbin", "/usr/bin", "/bin"}) dirs.emplace_back(d);
  for (const auto& d : dirs) {
    const std::string candidate = d + "/" + tool;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

/// Runs `argv` (argv[0] a path), waits at most 20 s; returns its exit status (-1 when it did
/// not exit) and what it printed on stdout and stderr.
std::pair<int, std::string> run_tool(const std::vector<std::string>& argv) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(str_cat("pipe failed: ", std::strerror(errno)));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int spawned = ::posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (spawned != 0) {
    ::close(fds[0]);
    throw std::runtime_error(str_cat("cannot start ", argv[0], ": ", std::strerror(spawned)));
  }
  std::string output;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      ::kill(pid, SIGKILL);
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char buffer[4096];
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n > 0)
      output.append(buffer, static_cast<std::size_t>(n));
    else if (n == 0 || errno != EINTR)
      break;
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  while (!output.empty() && (output.back() == '\n' || output.back() == ' ')) output.pop_back();
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

/// Runs ip or tc with `args`; std::runtime_error with the command line and its output on failure.
void run_checked(const std::string& tool, const std::vector<std::string>& args) {
  const std::string path = find_tool(tool);
  if (path.empty()) throw std::runtime_error(str_cat("emulated link: '", tool, "' not found (install iproute2)"));
  std::vector<std::string> argv{path};
  argv.insert(argv.end(), args.begin(), args.end());
  const auto [status, output] = run_tool(argv);
  if (status != 0) {
    std::string line = tool;
    for (const auto& a : args) line += " " + a;
    throw std::runtime_error(str_cat("emulated link: `", line, "` failed (exit ", status, "): ", output));
  }
}

/// Runs ip or tc with `args`; false when it fails (a qdisc this kernel lacks).
bool try_tool(const std::string& tool, const std::vector<std::string>& args) {
  const std::string path = find_tool(tool);
  if (path.empty()) return false;
  std::vector<std::string> argv{path};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_tool(argv).first == 0;
}

/// Bits of the effective capability set (/proc/self/status CapEff); 0 when unreadable.
std::uint64_t effective_capabilities() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("CapEff:", 0) == 0) return std::strtoull(line.c_str() + 7, nullptr, 16);
  return 0;
}

}  // namespace

std::string why_no_emulation() {
  constexpr int kNetAdmin = 12, kSysAdmin = 21;  // linux/capability.h
  const std::uint64_t caps = effective_capabilities();
  const bool privileged = ::geteuid() == 0 || ((caps >> kNetAdmin & 1) && (caps >> kSysAdmin & 1));
  std::string missing;
  if (!privileged)
    missing =
        "root, or the capabilities CAP_NET_ADMIN and CAP_SYS_ADMIN (to create network namespaces and "
        "shape their links)";
  for (const char* tool : {"ip", "tc"})
    if (find_tool(tool).empty())
      missing += str_cat(missing.empty() ? "" : "; ", "the '", tool, "' command (apt-get install iproute2)");
  if (!missing.empty()) return str_cat("emulated links (network = link { emulate = true }) need ", missing);
  // Privileged is not always enough (a container may forbid namespaces): try one.
  const std::string probe = str_cat(kNamespacePrefix, ::getpid(), "-probe");
  try {
    run_checked("ip", {"netns", "add", probe});
  } catch (const std::exception& e) {
    return str_cat(
        "emulated links (network = link { emulate = true }) need network namespaces, and this machine "
        "refused one: ",
        e.what());
  }
  try {
    run_checked("ip", {"netns", "delete", probe});
  } catch (const std::exception&) {
    // remove_stale_namespaces() of a later run deletes it.
  }
  return "";
}

LinkShaping link_shaping(std::uint64_t rate) {
  // A bucket of 1 ms let LeNet-5's 123 kB messages cross a 1 Gbit/s link 4-7x faster than the wire;
  // one of 200 us with TCP's 64 kB packets, which tbf must cut, ran 1 Gbit/s at a third of its rate.
  // The floors: TCP hands the device at least two segments at a time (tcp_min_tso_segs), two
  // Ethernet frames, and the bucket holds three. A floor of 16 kB was 1.3 ms of a 100 Mbit/s link,
  // which every message crossed that much sooner than the wire.
  constexpr std::uint64_t kFrame = 1514;
  const std::uint64_t burst = std::max<std::uint64_t>(3 * kFrame, rate / 8 / 5000);
  return {burst, std::clamp<std::uint64_t>(burst / 2, 2 * kFrame, 65536)};
}

std::vector<std::vector<std::string>> egress_shaping(const std::string& ns, const std::string& dev, std::uint64_t rate,
                                                     std::uint64_t burst, std::optional<std::uint64_t> delay_us) {
  const std::vector<std::string> tbf{"tbf", "rate", str_cat(rate, "bit"), "burst", str_cat(burst), "latency", "500ms"};
  std::vector<std::string> root{"-n", ns, "qdisc", "add", "dev", dev, "root"};
  if (!delay_us) {
    root.insert(root.end(), tbf.begin(), tbf.end());
    return {root};
  }
  // netem's queue holds what is in flight for the delay: 10,000 packets is 15 MB of frames.
  root.insert(root.end(), {"handle", "1:", "netem", "delay", str_cat(*delay_us, "us"), "limit", "10000"});
  std::vector<std::string> child{"-n", ns, "qdisc", "add", "dev", dev, "parent", "1:1", "handle", "10:"};
  child.insert(child.end(), tbf.begin(), tbf.end());
  return {root, child};
}

EmulatedNetwork::EmulatedNetwork(std::int64_t run_id, int ranks, double bits_per_second, double latency_seconds,
                                 std::vector<LinkChange> trace, std::optional<EmulatedIslands> islands)
    : bits_per_second_(bits_per_second),
      latency_seconds_(latency_seconds),
      trace_(std::move(trace)),
      islands_(std::move(islands)) {
  if (ranks < 1 || ranks > 250)
    throw std::runtime_error(str_cat("emulated link: ", ranks, " ranks; at most 250 are supported"));
  if (islands_ && static_cast<int>(islands_->island_of_rank.size()) != ranks)
    throw std::runtime_error(str_cat("emulated islands: ", islands_->island_of_rank.size(), " ranks in islands, ", ranks,
                                     " in the run"));
  const std::string tag = str_cat(kNamespacePrefix, ::getpid(), "-", run_id);
  hub_ = tag + "-hub";
  for (int r = 0; r < ranks; ++r) ranks_.push_back({str_cat(tag, "-r", r), str_cat("10.77.0.", r + 1)});
  // tbf: the rate in bit/s, the bucket and packets of link_shaping; a queue of up to 500 ms, so
  // that TCP meets a slow link rather than drops.
  shaping_ = link_shaping(static_cast<std::uint64_t>(std::llround(bits_per_second)));
  // Packets fit the bucket of the slowest rate they cross: the trace's, the link between islands.
  const auto fit = [&](double rate) {
    shaping_.gso_max_size = std::min(shaping_.gso_max_size,
                                     link_shaping(static_cast<std::uint64_t>(std::llround(rate))).gso_max_size);
  };
  for (const LinkChange& change : trace_) fit(change.bits_per_second);
  if (islands_) fit(islands_->bits_per_second);
  try {
    run_checked("ip", {"netns", "add", hub_});
    for (int r = 0; r < ranks; ++r) build_rank(r, latency_seconds);
    if (islands_) build_uplinks();
    const bool latency_changes =
        std::any_of(trace_.begin(), trace_.end(), [](const LinkChange& c) { return c.latency_seconds.has_value(); });
    if (latency_changes && !netem_)
      throw std::runtime_error(
          "emulated link: the trace changes the latency, which needs netem (not in this kernel, or the link's own "
          "latency is 0); leave the trace's latency column empty, or project the link (emulate = false)");
  } catch (...) {
    tear_down();
    throw;
  }
}

std::string EmulatedNetwork::bridge_of(int r) const {
  return islands_ ? str_cat("br", islands_->island_of_rank.at(static_cast<std::size_t>(r))) : "br0";
}

void EmulatedNetwork::ensure_bridge(const std::string& name) {
  if (std::find(bridges_.begin(), bridges_.end(), name) != bridges_.end()) return;
  run_checked("ip", {"-n", hub_, "link", "add", name, "type", "bridge"});
  run_checked("ip", {"-n", hub_, "link", "set", name, "up"});
  bridges_.push_back(name);
}

// Rank r's namespace, its veth pair to its bridge, and both directions shaped: what it sends by
// netem's delay where the kernel has it (the first rank finds out; never for islands, whose
// latency depends on the peer), then tbf; what it receives by tbf on the hub's port.
void EmulatedNetwork::build_rank(int r, double latency_seconds) {
  const auto rate = static_cast<std::uint64_t>(std::llround(bits_per_second_));
  const std::uint64_t burst = shaping_.burst;
  const auto delay_us = static_cast<std::uint64_t>(std::llround(latency_seconds * 1e6));
  const auto& rank = ranks_[static_cast<std::size_t>(r)];
  const std::string port = str_cat("r", r);
  ensure_bridge(bridge_of(r));
  run_checked("ip", {"netns", "add", rank.netns});
  run_checked("ip", {"-n", rank.netns, "link", "set", "lo", "up"});
  run_checked("ip", {"-n", rank.netns, "link", "add", "eth0", "type", "veth", "peer", "name", port, "netns", hub_});
  run_checked("ip", {"-n", rank.netns, "addr", "add", rank.address + "/24", "dev", "eth0"});
  run_checked("ip", {"-n", rank.netns, "link", "set", "eth0", "gso_max_size", str_cat(shaping_.gso_max_size)});
  run_checked("ip", {"-n", rank.netns, "link", "set", "eth0", "up"});
  run_checked("ip", {"-n", hub_, "link", "set", port, "master", bridge_of(r)});
  run_checked("ip", {"-n", hub_, "link", "set", port, "up"});
  if (r == 0 && delay_us > 0 && !islands_) {
    const auto with_netem = egress_shaping(rank.netns, "eth0", rate, burst, delay_us);
    netem_ = try_tool("tc", with_netem[0]);
    if (netem_) run_checked("tc", with_netem[1]);
  }
  if (r > 0 || !netem_)
    for (const auto& command : egress_shaping(rank.netns, "eth0", rate, burst,
                                              netem_ ? std::optional<std::uint64_t>(delay_us) : std::nullopt))
      run_checked("tc", command);
  for (const auto& command : egress_shaping(hub_, port, rate, burst, std::nullopt)) run_checked("tc", command);
}

// Each island's one link to the others: a veth pair from its bridge (u<i>) to a core bridge
// (d<i>), tbf at the rate between islands on both ends, so that u<i> carries what leaves the
// island and d<i> what enters it, each shared by the island's ranks.
void EmulatedNetwork::build_uplinks() {
  const auto rate = static_cast<std::uint64_t>(std::llround(islands_->bits_per_second));
  const std::uint64_t burst = link_shaping(rate).burst;
  ensure_bridge("core");
  const int count = *std::max_element(islands_->island_of_rank.begin(), islands_->island_of_rank.end()) + 1;
  for (int i = 0; i < count; ++i) {
    const std::string up = str_cat("u", i), down = str_cat("d", i);
    run_checked("ip", {"-n", hub_, "link", "add", up, "type", "veth", "peer", "name", down});
    run_checked("ip", {"-n", hub_, "link", "set", up, "master", str_cat("br", i)});
    run_checked("ip", {"-n", hub_, "link", "set", down, "master", "core"});
    for (const std::string& end : {up, down}) {
      run_checked("ip", {"-n", hub_, "link", "set", end, "up"});
      for (const auto& command : egress_shaping(hub_, end, rate, burst, std::nullopt)) run_checked("tc", command);
    }
  }
}

EmulatedNetwork::~EmulatedNetwork() {
  stop_trace();
  tear_down();
}

void EmulatedNetwork::start_trace() {
  if (trace_.empty() || replay_.joinable()) return;
  replay_ = std::thread([this, start = std::chrono::steady_clock::now()] { replay(start); });
}

void EmulatedNetwork::stop_trace() noexcept {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  stopping_.notify_all();
  if (replay_.joinable()) replay_.join();
}

void EmulatedNetwork::replay(std::chrono::steady_clock::time_point start) {
  for (const LinkChange& change : trace_) {
    const auto due = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                 std::chrono::duration<double>(change.at_seconds));
    std::unique_lock lock(mutex_);
    if (stopping_.wait_until(lock, due, [&] { return stop_; })) return;
    lock.unlock();
    std::string outcome;
    try {
      apply(change);
      outcome = str_cat(static_cast<std::uint64_t>(std::llround(change.bits_per_second)), " bit/s");
      if (change.latency_seconds) outcome += str_cat(", latency ", std::llround(*change.latency_seconds * 1e6), " us");
    } catch (const std::exception& e) {
      outcome = str_cat("failed: ", e.what());
    }
    const double at = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    lock.lock();
    trace_log_ += str_cat(trace_log_.empty() ? "" : "; ", "at ", std::llround(at * 1000) / 1000.0, " s: ", outcome);
  }
}

void EmulatedNetwork::apply(const LinkChange& change) {
  const auto rate = static_cast<std::uint64_t>(std::llround(change.bits_per_second));
  const std::vector<std::string> tbf{"tbf",   "rate",   str_cat(rate, "bit"), "burst", str_cat(link_shaping(rate).burst),
                                     "latency", "500ms"};
  const auto change_qdisc = [&](const std::string& ns, const std::string& dev, std::vector<std::string> where,
                                const std::vector<std::string>& qdisc) {
    std::vector<std::string> command{"-n", ns, "qdisc", "change", "dev", dev};
    command.insert(command.end(), where.begin(), where.end());
    command.insert(command.end(), qdisc.begin(), qdisc.end());
    run_checked("tc", command);
  };
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    const std::string& ns = ranks_[r].netns;
    if (netem_ && change.latency_seconds)
      change_qdisc(ns, "eth0", {"root", "handle", "1:"},
                   {"netem", "delay", str_cat(std::llround(*change.latency_seconds * 1e6), "us"), "limit", "10000"});
    change_qdisc(ns, "eth0", netem_ ? std::vector<std::string>{"parent", "1:1", "handle", "10:"} : std::vector<std::string>{"root"},
                 tbf);
    change_qdisc(hub_, str_cat("r", r), {"root"}, tbf);
  }
}

std::string EmulatedNetwork::trace_log() const {
  std::lock_guard lock(mutex_);
  return trace_log_;
}

void EmulatedNetwork::tear_down() noexcept {
  for (const auto& ns : namespaces()) {
    if (!std::filesystem::exists(std::string(kNetnsDir) + "/" + ns)) continue;
    try {
      run_checked("ip", {"netns", "delete", ns});
    } catch (const std::exception&) {
      // Left for remove_stale_namespaces() of a later run.
    }
  }
}

std::vector<std::string> EmulatedNetwork::namespaces() const {
  std::vector<std::string> out{hub_};
  for (const auto& r : ranks_) out.push_back(r.netns);
  return out;
}

std::string EmulatedNetwork::description() const {
  const std::string latency =
      netem_ ? str_cat("latency ", std::llround(latency_seconds_ * 1e6), " us by netem delay on each rank's egress")
             : "latency added per message by laconic's transport (netem is not in this kernel)";
  if (islands_)
    return str_cat("veth pairs to a bridge per island (", bridges_.size() - 1, " islands), each rank's link shaped with tc tbf at ",
                   static_cast<std::uint64_t>(std::llround(bits_per_second_)), " bit/s per direction, a bucket of ",
                   shaping_.burst, " bytes, packets of at most ", shaping_.gso_max_size,
                   " bytes; each island's link to a core bridge shaped with tbf at ",
                   static_cast<std::uint64_t>(std::llround(islands_->bits_per_second)),
                   " bit/s each way, a bucket of ",
                   link_shaping(static_cast<std::uint64_t>(std::llround(islands_->bits_per_second))).burst,
                   " bytes; latencies added per message by laconic's transport, ",
                   std::llround(latency_seconds_ * 1e6), " us inside an island, ",
                   std::llround(islands_->latency_seconds * 1e6), " us between");
  return str_cat("veth pairs to a bridge, each rank's link shaped with tc tbf at ",
                 static_cast<std::uint64_t>(std::llround(bits_per_second_)), " bit/s per direction, a bucket of ",
                 shaping_.burst, " bytes, packets of at most ", shaping_.gso_max_size, " bytes; ", latency,
                 trace_.empty() ? "" : str_cat("; its trace (", comm::describe_trace(trace_), ") replayed by tc qdisc change"));
}

std::vector<std::string> remove_stale_namespaces() {
  std::vector<std::string> removed;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(kNetnsDir, error)) {
    const std::string name = entry.path().filename().string();
    if (!left_by_dead_controller(name, kNamespacePrefix)) continue;
    try {
      run_checked("ip", {"netns", "delete", name});
      removed.push_back(name);
    } catch (const std::exception&) {
      // Not ours to force (no privileges now): left as it is.
    }
  }
  return removed;
}

void join_namespace(const std::string& name) {
  const std::string path = std::string(kNetnsDir) + "/" + name;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(str_cat("cannot open network namespace ", path, ": ", std::strerror(errno)));
  const int joined = ::setns(fd, CLONE_NEWNET);
  const int saved = errno;
  ::close(fd);
  if (joined != 0)
    throw std::runtime_error(str_cat("cannot join network namespace ", name, ": ", std::strerror(saved)));
}

}  // namespace laconic::controller
