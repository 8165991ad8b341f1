#pragma once
// What one rank of a run is told: the run's launch order (controller/launch_order.hpp), the same for
// every rank, and what is this rank's own; the arguments of `laconic worker`, written once. A
// forked worker gets the struct itself; an exec'd one the words of to_argv(), which
// add_worker_options() parses back into the same struct.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "controller/launch_order.hpp"

namespace CLI {
class App;
}

namespace laconic::controller {

struct WorkerArgs {
  std::string file;       ///< the experiment file
  std::string file_hash;  ///< refuse to run when the file no longer has this hash ("" = skip)
  std::vector<std::string> overrides;  ///< --set KEY=VALUE, as the controller applied them
  LaunchOrder order;                   ///< which run, resolved how: the same for every rank
  int rank = 0;  ///< the first rank this process trains (of order.ranks_per_process())
  /// Where the run's ranks meet: a directory private to the run, or a launcher's store
  /// (file:///DIR, tcp://HOST:PORT, redis://HOST:PORT; engine/comm/store.hpp), under
  /// order.store_prefix.
  std::string store;
  std::string hostname = "127.0.0.1";  ///< address Gloo listens on
  std::string interface;               ///< or the interface it listens on (GLOO_SOCKET_IFNAME)
  int message_fd = -1;                 ///< pipe to the controller; -1 = report on stderr only
  std::string checkpoint_dir;          ///< where checkpoints go; "" = none
  std::int64_t checkpoint_every = 0;   ///< steps between checkpoints; 0 = none
  std::int64_t resume_step = -1;       ///< start from this rank's checkpoint of this step; -1 = fresh
  /// An elastic run's (engine/comm/elastic.hpp): how many times the controller relaunched this
  /// rank before; above 0 it asks to join the run under way.
  int incarnation = 0;
  /// An emulated link (controller/emulated_network.hpp): the network namespace to join before the
  /// rendezvous ("" = stay), and the latency every message is held back, in seconds.
  std::string netns;
  double message_delay = 0;
  /// Emulated islands: the latency of a message to another island's rank; < 0: message_delay.
  double message_delay_between = -1;

  /// `--file F --run-index I ...`: the required fields always, the others where they differ from
  /// their defaults; --set once per override.
  std::vector<std::string> to_argv() const;
};

/// Declares `laconic worker`'s options on `command`, each filling its field of `args`.
void add_worker_options(CLI::App& command, WorkerArgs& args);

}  // namespace laconic::controller
