#include "controller/rank_relay.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <random>
#include <thread>
#include <utility>

#include "engine/comm/reachability.hpp"
#include "engine/core/error.hpp"
#include "engine/core/worker_message.hpp"

namespace laconic::controller {
namespace {

using Clock = std::chrono::steady_clock;

// Whole seconds since `start`, as a message counts them.
long seconds_since(Clock::time_point start) {
  return static_cast<long>(std::chrono::duration<double>(Clock::now() - start).count());
}

std::chrono::milliseconds left_until(Clock::time_point deadline) {
  return std::max(std::chrono::milliseconds(0),
                  std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
}

// A peer that vanishes without closing (its host powered off, its network cut) is noticed
// within about 25 s by TCP keepalive, instead of never.
void tune_socket(int fd) {
  const int on = 1, idle = 10, interval = 5, count = 3;
  ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
}

std::string who(const RankHello& h) {
  return str_cat("rank ", h.rank, " (host ", h.host, ", ", h.address, ", pid ", h.pid, ")");
}

// Why `theirs` cannot join `mine`'s sweep; "" when it can.
std::string disagreement(const RankHello& mine, const RankHello& theirs) {
  if (theirs.world != mine.world)
    return str_cat(who(theirs), " was started with a world of ", theirs.world, " ranks, rank 0 with ", mine.world);
  if (theirs.file_hash != mine.file_hash)
    return str_cat(who(theirs), " loaded an experiment file with hash ", theirs.file_hash, ", rank 0 one with hash ",
                   mine.file_hash, ": every host needs the same file");
  if (theirs.plan != mine.plan)
    return str_cat(who(theirs), " planned other runs than rank 0 (plan ", theirs.plan, " vs ", mine.plan,
                   "): give every rank the same --only and --shard");
  return "";
}

// "ADDRESS\tPORT\tNONCE" as published.
struct Published {
  std::string address;
  int port = 0;
  std::string nonce;
};

std::optional<Published> parse_published(const std::vector<char>& value) {
  const auto f = relay_fields(std::string(value.begin(), value.end()));
  if (f.size() != 3) return std::nullopt;
  try {
    return Published{f[0], std::stoi(f[1]), f[2]};
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// A connected socket to address:port within `timeout`, or -1.
int connect_to(const std::string& address, int port, std::chrono::milliseconds timeout) {
  const int fd = comm::connect_within(address, port, timeout, nullptr);
  if (fd >= 0) tune_socket(fd);
  return fd;
}

std::string random_nonce() {
  std::random_device device;
  std::mt19937_64 generator((static_cast<std::uint64_t>(device()) << 32) ^ device() ^
                            static_cast<std::uint64_t>(Clock::now().time_since_epoch().count()));
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(generator()));
  return text;
}

}  // namespace

RelayConnection::RelayConnection(int fd, RankHello peer) : fd_(fd), peer_(std::move(peer)) {}

RelayConnection::~RelayConnection() { ::close(fd_); }

bool RelayConnection::send_line(const std::string& line) {
  const std::string data = line + "\n";
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::send(fd_, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

std::optional<std::string> RelayConnection::read_line(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (true) {
    const auto newline = buffer_.find('\n');
    if (newline != std::string::npos) {
      std::string line = buffer_.substr(0, newline);
      buffer_.erase(0, newline + 1);
      return line;
    }
    if (closed_) return std::nullopt;
    pollfd p{fd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left_until(deadline).count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return std::nullopt;
    char chunk[4096];
    const ssize_t n = ::read(fd_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      closed_ = true;
      continue;
    }
    buffer_.append(chunk, static_cast<std::size_t>(n));
  }
}

std::string RelayConnection::take_buffered() { return std::exchange(buffer_, std::string()); }

std::string relay_key(const std::string& launch_id) {
  return launch_id.empty() ? "laconic/rank0" : str_cat("laconic/", launch_id, "/rank0");
}

std::vector<std::unique_ptr<RelayConnection>> gather_ranks(comm::KeyValueStore& store, const std::string& key,
                                                           const std::string& address, const RankHello& mine,
                                                           std::chrono::milliseconds timeout, std::string& nonce,
                                                           const std::atomic<bool>& stop) {
  const auto started = Clock::now();
  const auto deadline = started + timeout;
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener < 0) throw CommError(str_cat("rank 0: cannot open a socket: ", std::strerror(errno)));
  struct CloseListener {
    int fd;
    ~CloseListener() { ::close(fd); }
  } close_listener{listener};
  sockaddr_in at{};
  at.sin_family = AF_INET;
  at.sin_port = 0;
  ::inet_pton(AF_INET, address.c_str(), &at.sin_addr);
  socklen_t length = sizeof at;
  if (::bind(listener, reinterpret_cast<sockaddr*>(&at), sizeof at) != 0 || ::listen(listener, 128) != 0 ||
      ::getsockname(listener, reinterpret_cast<sockaddr*>(&at), &length) != 0)
    throw CommError(str_cat("rank 0: cannot listen on ", address, ": ", std::strerror(errno)));
  nonce = random_nonce();
  const std::string published = str_cat(escape_field(address), "\t", ntohs(at.sin_port), "\t", nonce);
  store.set(key, std::vector<char>(published.begin(), published.end()));

  std::map<int, std::unique_ptr<RelayConnection>> joined;
  const auto missing = [&] {
    std::string ranks;
    for (int r = 1; r < mine.world; ++r)
      if (!joined.count(r)) ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
    return ranks;
  };
  std::string refusal;
  while (static_cast<int>(joined.size()) < mine.world - 1 && refusal.empty()) {
    if (stop) {
      for (auto& [rank, connection] : joined)
        connection->send_line(encode(JoinRefused{"rank 0 was stopped by the user"}));
      throw StoppedError(str_cat("rank 0 stopped by the user (Ctrl-C or SIGTERM) after waiting ",
                                 seconds_since(started), " s of ", timeout.count() / 1000,
                                 " s (--launch-timeout) for ranks ", missing(), " of ", mine.world));
    }
    pollfd p{listener, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::min<long>(left_until(deadline).count(), 1000)));
    if (ready <= 0) {
      if (Clock::now() < deadline) continue;
      for (auto& [rank, connection] : joined)
        connection->send_line(encode(JoinRefused{str_cat("ranks ", missing(), " did not join rank 0 in time")}));
      throw CommError(str_cat("rank 0: ranks ", missing(), " of ", mine.world, " did not join within ",
                              timeout.count() / 1000,
                              " s (--launch-timeout): were they started, with the same "
                              "store (",
                              key, "), and can they reach ", address, "?"));
    }
    const int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    tune_socket(fd);
    auto connection = std::make_unique<RelayConnection>(fd, RankHello{});
    const auto line = connection->read_line(std::min(left_until(deadline), std::chrono::milliseconds(10'000)));
    const auto hello = line ? decode_hello(*line) : std::nullopt;
    if (!hello) continue;  // not a laconic rank, or one that went away: it is not counted
    connection->set_peer(*hello);
    if (hello->rank < 1 || hello->rank >= mine.world)
      refusal = str_cat(who(*hello), " is not a rank of a world of ", mine.world);
    else if (joined.count(hello->rank))
      refusal = str_cat("two processes claim rank ", hello->rank, ": ", who(joined[hello->rank]->peer()), " and ",
                        who(*hello));
    else
      refusal = disagreement(mine, *hello);
    if (!refusal.empty())
      connection->send_line(encode(JoinRefused{refusal}));
    else
      joined[hello->rank] = std::move(connection);
  }
  if (!refusal.empty()) {
    for (auto& [rank, connection] : joined) connection->send_line(encode(JoinRefused{refusal}));
    throw ConfigError(refusal);
  }
  std::vector<std::unique_ptr<RelayConnection>> ranks;
  for (auto& [rank, connection] : joined) {
    connection->send_line(encode(JoinAccepted{nonce}));
    ranks.push_back(std::move(connection));
  }
  return ranks;
}

std::unique_ptr<RelayConnection> join_rank0(comm::KeyValueStore& store, const std::string& key, const RankHello& mine,
                                            std::chrono::milliseconds timeout, std::string& nonce,
                                            const std::atomic<bool>& stop) {
  const auto started = Clock::now();
  const auto deadline = started + timeout;
  const std::string unpublished = str_cat("rank 0 has not published its address under '", key, "'");
  std::string last_problem = unpublished;
  const auto stopped = [&](const std::string& state) {
    return StoppedError(str_cat("rank ", mine.rank, " stopped by the user (Ctrl-C or SIGTERM) after waiting ",
                                seconds_since(started), " s of ", timeout.count() / 1000,
                                " s (--launch-timeout): ", state));
  };
  while (Clock::now() < deadline) {
    if (stop) throw stopped(last_problem);
    // A second at a time, so that a stop is seen.
    const auto slice = std::min(left_until(deadline), std::chrono::milliseconds(1000));
    const auto asked = Clock::now();
    std::optional<Published> rank0;
    try {
      rank0 = parse_published(store.get(key, slice));
    } catch (const CommError& e) {
      // Waited the whole slice: not published yet. Sooner: the store itself failed.
      last_problem = Clock::now() - asked >= slice ? unpublished : e.what();
      if (last_problem != unpublished) std::this_thread::sleep_for(std::chrono::milliseconds(200));
      continue;
    }
    if (!rank0) {
      last_problem = str_cat("the store's '", key, "' is not an address rank 0 wrote");
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      continue;
    }
    // An address left by an earlier launch refuses the connection: read the key again.
    const int fd =
        connect_to(rank0->address, rank0->port, std::min(left_until(deadline), std::chrono::milliseconds(5000)));
    if (fd < 0) {
      last_problem =
          str_cat("cannot connect to rank 0 at ", rank0->address, ":", rank0->port, ": ", std::strerror(errno));
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      continue;
    }
    auto connection = std::make_unique<RelayConnection>(fd, RankHello{0, mine.world, "", "", "", rank0->address, 0, 0});
    if (!connection->send_line(encode(mine))) continue;
    // Rank 0 answers once every rank joined: a second at a time, so that a stop is seen.
    std::optional<std::string> answer;
    while (!answer && !connection->closed() && Clock::now() < deadline) {
      if (stop) throw stopped(str_cat("joined rank 0 at ", rank0->address, ", waiting for the other ranks"));
      answer = connection->read_line(std::min(left_until(deadline), std::chrono::milliseconds(1000)));
    }
    if (!answer) {
      last_problem = str_cat("rank 0 at ", rank0->address, ":", rank0->port, " did not answer");
      continue;
    }
    const auto said = decode_join_answer(*answer);
    if (const auto* refused = said ? std::get_if<JoinRefused>(&*said) : nullptr)
      throw ConfigError("rank 0 refused the sweep: " + refused->why);
    if (const auto* accepted = said ? std::get_if<JoinAccepted>(&*said) : nullptr) {
      nonce = accepted->nonce;
      return connection;
    }
    last_problem = str_cat("rank 0 answered '", *answer, "'");
  }
  throw CommError(str_cat("rank ", mine.rank, ": could not join rank 0 within ", timeout.count() / 1000,
                          " s (--launch-timeout): ", last_problem));
}

}  // namespace laconic::controller
