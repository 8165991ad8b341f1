#include "controller/launch_environment.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "engine/core/error.hpp"
#include "engine/core/host_name.hpp"

extern char** environ;

namespace laconic::controller {
namespace {

std::string value_of(const Environment& env, const std::string& name) {
  const auto it = env.find(name);
  return it == env.end() ? std::string() : it->second;
}

// A non-negative integer variable; ConfigError naming it when it is something else.
int integer_variable(const Environment& env, const std::string& name, const std::string& launcher) {
  const std::string text = value_of(env, name);
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0 || value < 0 || value > 1'000'000)
    throw ConfigError(str_cat(launcher, " set ", name, "=\"", text, "\", which is not a non-negative integer"));
  return static_cast<int>(value);
}

// The TCP store at MASTER_ADDR:MASTER_PORT, which every launcher but the flags uses.
comm::StoreAddress master_store(const Environment& env, const std::string& launcher, const std::string& rank_names) {
  const std::string addr = value_of(env, "MASTER_ADDR"), port = value_of(env, "MASTER_PORT");
  if (addr.empty() || port.empty())
    throw ConfigError(str_cat("started by ", launcher, " (", rank_names,
                              ") but MASTER_ADDR and MASTER_PORT are not "
                              "both set: export them on every rank (the host of rank 0 and a free port, e.g. "
                              "MASTER_ADDR=node01 MASTER_PORT=29500), or pass --rank, --world and --store "
                              "(docs/multi-host.md)"));
  try {
    return comm::StoreAddress::parse(str_cat("tcp://", addr, ":", port));
  } catch (const ConfigError&) {
    throw ConfigError(str_cat(launcher, " set MASTER_ADDR=\"", addr, "\" MASTER_PORT=\"", port,
                              "\": not a host and a port in 1..65535"));
  }
}

// The first IPv4 address `name` resolves to ("" when none).
std::string resolve_ipv4(const std::string& name) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  addrinfo* found = nullptr;
  if (name.empty() || ::getaddrinfo(name.c_str(), nullptr, &hints, &found) != 0 || found == nullptr) return "";
  char text[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(found->ai_addr)->sin_addr, text, sizeof text);
  ::freeaddrinfo(found);
  return text;
}

}  // namespace

Environment process_environment() {
  Environment env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const auto eq = entry.find('=');
    if (eq != std::string::npos) env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  return env;
}

namespace {

// LaunchedRank::launch_id: the flag, our variable, or the launcher's job.
std::string launch_id_of(const Environment& env, const LaunchFlags& flags) {
  if (!flags.launch_id.empty()) return flags.launch_id;
  for (const char* name : {"LACONIC_LAUNCH_ID", "TORCHELASTIC_RUN_ID", "PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid"})
    if (const std::string id = value_of(env, name); !id.empty() && id != "none") return id;
  if (const std::string job = value_of(env, "SLURM_JOB_ID"); !job.empty())
    return str_cat(job, ".", value_of(env, "SLURM_STEP_ID"));
  return "";
}

}  // namespace

std::optional<LaunchedRank> detect_launch(const Environment& env, const LaunchFlags& flags) {
  LaunchedRank launched;
  const bool any_flag = flags.rank >= 0 || flags.world >= 0 || !flags.store.empty();
  if (any_flag) {
    if (flags.rank < 0 || flags.world < 1 || flags.store.empty())
      throw ConfigError(
          "--rank, --world and --store go together: give all three (e.g. --rank 1 --world 4 "
          "--store tcp://node01:29500) or none");
    launched.launcher = "flags";
    launched.rank = flags.rank;
    launched.world = flags.world;
    launched.store = comm::StoreAddress::parse(flags.store);
    launched.description = str_cat("--rank ", flags.rank, " --world ", flags.world, " --store ", flags.store);
  } else if (env.count("RANK") && env.count("WORLD_SIZE")) {
    launched.launcher = env.count("TORCHELASTIC_RUN_ID") ? "torchrun" : "env";
    launched.rank = integer_variable(env, "RANK", launched.launcher);
    launched.world = integer_variable(env, "WORLD_SIZE", launched.launcher);
    launched.store = master_store(env, launched.launcher, "RANK, WORLD_SIZE");
    launched.store_served_by_launcher = value_of(env, "TORCHELASTIC_USE_AGENT_STORE") == "True";
  } else if (env.count("OMPI_COMM_WORLD_RANK") && env.count("OMPI_COMM_WORLD_SIZE")) {
    launched.launcher = "openmpi";
    launched.rank = integer_variable(env, "OMPI_COMM_WORLD_RANK", "mpirun");
    launched.world = integer_variable(env, "OMPI_COMM_WORLD_SIZE", "mpirun");
    launched.store = master_store(env, "mpirun", "OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE");
  } else if (env.count("SLURM_PROCID") && env.count("SLURM_NTASKS") && env.count("SLURM_STEP_ID")) {
    // SLURM_STEP_ID: a task of `srun`. The batch script itself has SLURM_PROCID=0 and
    // SLURM_NTASKS too, but it is one process, which forks its workers as usual.
    launched.launcher = "slurm";
    launched.rank = integer_variable(env, "SLURM_PROCID", "srun");
    launched.world = integer_variable(env, "SLURM_NTASKS", "srun");
    // One task (`srun --pty bash`) is a shell, not a rank.
    if (launched.world > 1) launched.store = master_store(env, "srun", "SLURM_PROCID, SLURM_NTASKS");
  } else {
    return std::nullopt;
  }
  if (launched.world <= 1) return std::nullopt;
  if (launched.rank >= launched.world)
    throw ConfigError(
        str_cat("rank ", launched.rank, " is not below the world size ", launched.world, " (", launched.launcher, ")"));
  launched.interface = value_of(env, "GLOO_SOCKET_IFNAME");
  launched.route_to = value_of(env, "MASTER_ADDR");
  if (launched.route_to.empty() && launched.store.kind != comm::StoreAddress::Kind::File)
    launched.route_to = launched.store.host;
  launched.launch_id = launch_id_of(env, flags);
  if (launched.description.empty()) {
    launched.description =
        str_cat(launched.launcher, ": rank ", launched.rank, " of ", launched.world, ", store ", launched.store.text());
    if (launched.store_served_by_launcher) launched.description += " (served by torchrun's agent)";
  }
  return launched;
}

std::string local_address(const std::string& interface, const std::string& host) {
  if (!interface.empty()) {
    ifaddrs* list = nullptr;
    if (::getifaddrs(&list) != 0)
      throw ConfigError(str_cat("cannot list the network interfaces: ", std::strerror(errno)));
    std::string found;
    for (ifaddrs* i = list; i != nullptr && found.empty(); i = i->ifa_next)
      if (i->ifa_addr != nullptr && i->ifa_addr->sa_family == AF_INET && interface == i->ifa_name) {
        char text[INET_ADDRSTRLEN] = {};
        ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, text, sizeof text);
        found = text;
      }
    ::freeifaddrs(list);
    if (found.empty())
      throw ConfigError(str_cat("GLOO_SOCKET_IFNAME=", interface,
                                ": this host has no interface of that name with "
                                "an IPv4 address (`ip -4 addr` lists them)"));
    return found;
  }
  if (host.empty()) {
    const std::string own = resolve_ipv4(host_name());
    return own.empty() ? "127.0.0.1" : own;
  }
  const std::string target = resolve_ipv4(host);
  if (target.empty()) throw ConfigError(str_cat("cannot resolve '", host, "' (MASTER_ADDR or the store's host)"));
  // Connecting a UDP socket sends nothing; it only asks the kernel which route, and so which
  // source address, reaches the target.
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(9);
  ::inet_pton(AF_INET, target.c_str(), &to.sin_addr);
  sockaddr_in mine{};
  socklen_t length = sizeof mine;
  const bool routed = fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) == 0 &&
                      ::getsockname(fd, reinterpret_cast<sockaddr*>(&mine), &length) == 0;
  const int saved = errno;
  if (fd >= 0) ::close(fd);
  if (!routed)
    throw ConfigError(str_cat("no route from this host to ", host, " (", target, "): ", std::strerror(saved),
                              "; set GLOO_SOCKET_IFNAME to the interface that reaches it"));
  char text[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &mine.sin_addr, text, sizeof text);
  return text;
}

}  // namespace laconic::controller
