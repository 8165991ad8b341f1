#pragma once
// "Hosts" on one machine for multi-host tests: network namespaces of this test process's own,
// each with its own 10.x address, joined pairwise by veth pairs, and commands started inside
// them. Everything is removed (processes killed, namespaces deleted) when the object goes.
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "cli_harness.hpp"
#include "controller/emulated_network.hpp"

namespace laconic::testing {

class NetHosts {
 public:
  /// `count` namespaces "lcmh-PID-0", ... at 10.222.N.1, 10.222.N.2, ... (N from this pid), on
  /// one /24: each joins a bridge in namespace 0 by a veth pair. ok() is false, and why() says why, where this
  /// machine cannot make them (not root, no iproute2, namespaces refused).
  explicit NetHosts(int count) {
    why_ = controller::why_no_emulation();
    if (!why_.empty()) return;
    const std::string subnet = "10.222." + std::to_string(::getpid() % 250);
    for (int i = 0; i < count; ++i) {
      names_.push_back("lcmh-" + std::to_string(::getpid()) + "-" + std::to_string(i));
      addresses_.push_back(subnet + "." + std::to_string(i + 1));
      sh("ip netns add " + names_.back() + " && ip -n " + names_.back() + " link set lo up");
    }
    // One bridge in namespace 0; every namespace (0 too) joins it by a veth pair.
    sh("ip -n " + names_[0] + " link add br0 type bridge && ip -n " + names_[0] + " link set br0 up");
    for (int i = 0; i < count; ++i) {
      const std::string outer = "lm" + std::to_string(::getpid()) + "b" + std::to_string(i);
      const std::string inner = "lm" + std::to_string(::getpid()) + "h" + std::to_string(i);
      sh("ip link add " + outer + " type veth peer name " + inner);
      sh("ip link set " + outer + " netns " + names_[0] + " && ip -n " + names_[0] + " link set " + outer +
         " master br0 && ip -n " + names_[0] + " link set " + outer + " up");
      sh("ip link set " + inner + " netns " + names_[i] + " && ip -n " + names_[i] + " link set " + inner +
         " name eth0 && ip -n " + names_[i] + " addr add " + addresses_[i] + "/24 dev eth0 && ip -n " + names_[i] +
         " link set eth0 up");
    }
  }
  ~NetHosts() {
    for (const auto& name : names_) {
      kill_all(name);
      std::system(("ip netns delete " + name + " 2>/dev/null").c_str());
    }
  }
  NetHosts(const NetHosts&) = delete;
  NetHosts& operator=(const NetHosts&) = delete;

  bool ok() const { return why_.empty(); }
  const std::string& why() const { return why_; }
  const std::string& name(int host) const { return names_.at(static_cast<std::size_t>(host)); }
  const std::string& address(int host) const { return addresses_.at(static_cast<std::size_t>(host)); }

  /// `command` run by sh in host `host`'s namespace, in `dir`, in the background, with the
  /// laconic binary's directory first on PATH; its output to `log` in `dir`. Returns its pid.
  pid_t start(int host, const std::string& dir, const std::string& command, const std::string& log) const {
    const std::string bin = std::string(LACONIC_BINARY).substr(0, std::string(LACONIC_BINARY).rfind('/'));
    const pid_t pid = ::fork();
    if (pid != 0) return pid;
    ::execlp("ip", "ip", "netns", "exec", name(host).c_str(), "/bin/sh", "-c",
             ("cd '" + dir + "' && PATH='" + bin + "':$PATH exec " + command + " > '" + log + "' 2>&1").c_str(),
             static_cast<char*>(nullptr));
    ::_exit(127);
  }

  /// Pids of the processes in host `host`'s namespace.
  std::vector<pid_t> pids(int host) const {
    std::vector<pid_t> out;
    std::FILE* p = ::popen(("ip netns pids " + name(host) + " 2>/dev/null").c_str(), "r");
    if (!p) return out;
    int pid = 0;
    while (std::fscanf(p, "%d", &pid) == 1) out.push_back(pid);
    ::pclose(p);
    return out;
  }

  /// Pids in host `host`'s namespace whose command name starts with `prefix` ("laconic").
  std::vector<pid_t> pids_named(int host, const std::string& prefix) const {
    std::vector<pid_t> out;
    for (pid_t pid : pids(host)) {
      const std::string comm = read_file("/proc/" + std::to_string(pid) + "/comm");
      if (comm.rfind(prefix, 0) == 0) out.push_back(pid);
    }
    return out;
  }

  /// SIGKILL to every process in host `host`'s namespace: the host is gone.
  void kill_host(int host) const { kill_all(name(host)); }

  /// Takes host `host`'s link to the bridge down (its processes live on, cut off), or up again.
  void set_link(int host, bool up) const {
    sh("ip -n " + names_[0] + " link set lm" + std::to_string(::getpid()) + "b" + std::to_string(host) +
       (up ? " up" : " down"));
  }

 private:
  static void sh(const std::string& command) {
    if (std::system((command + " 2>&1").c_str()) != 0) throw std::runtime_error("failed: " + command);
  }
  static void kill_all(const std::string& ns) {
    std::system(("ip netns pids " + ns + " 2>/dev/null | xargs -r kill -9").c_str());
  }

  std::string why_;
  std::vector<std::string> names_, addresses_;
};

}  // namespace laconic::testing
