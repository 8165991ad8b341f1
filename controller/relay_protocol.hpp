#pragma once
// What rank 0 and the other ranks of a launched sweep say to each other on their relay
// connection (controller/rank_relay.hpp; docs/multi-host.md), as typed messages with one encoding each:
// a line of tab-separated, escaped fields whose first field names the message. The worker's own
// lines that a rank forwards to rank 0 (engine/core/worker_message.hpp) travel beside them.
//
//   a rank joins:        RankHello  ("L")    rank 0 answers:   JoinAccepted ("O") | JoinRefused ("!")
//   rank 0 orders:       LaunchOrder ("R")    SignalOrder ("S")  StillAlive ("P")  SweepDone ("D")
//                        RelaunchOrder ("A")
//   a rank reports:      WorkerExit ("X")    after its worker's lines for the run
#include <cstddef>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "controller/launch_order.hpp"

namespace laconic::controller {

/// Who a rank is and what it is about to run, as it tells rank 0 when it joins.
struct RankHello {
  int rank = 0;
  int world = 1;
  std::string file_hash;  ///< the experiment file's hash
  std::string plan;       ///< fingerprint of the runs it selected (index, name, world of each)
  std::string host;       ///< host name
  std::string address;    ///< the address its worker listens on
  int cores = 1;          ///< the host's cores
  long pid = 0;
};

/// Rank 0 took the rank: the prefix of this launch's keys in the store.
struct JoinAccepted {
  std::string nonce;
};
/// Rank 0 refused the sweep, and why (every rank is told the same).
struct JoinRefused {
  std::string why;
};
using JoinAnswer = std::variant<JoinAccepted, JoinRefused>;

/// Send this signal to the worker of the current run.
struct SignalOrder {
  int signal = 0;
};
/// A sign of life from rank 0 while a run trains.
struct StillAlive {};
/// An elastic run's worker of this rank died: start it again, the current run's `incarnation`-th
/// relaunch (engine/comm/elastic.hpp).
struct RelaunchOrder {
  int incarnation = 1;
};
/// The sweep is over: exit with this status.
struct SweepDone {
  int status = 0;
};
/// What rank 0 tells a rank; a LaunchOrder (controller/launch_order.hpp) starts the run's worker there,
/// the same order rank 0's own worker is given.
using RankOrder = std::variant<LaunchOrder, SignalOrder, StillAlive, SweepDone, RelaunchOrder>;

/// The rank's worker of the current run was reaped with this wait status.
struct WorkerExit {
  int status = 0;
};

std::string encode(const RankHello& hello);
std::string encode(const JoinAnswer& answer);
std::string encode(const RankOrder& order);
std::string encode(const WorkerExit& exit);

/// Each message read back from its line; nothing for a line that is not one (another message, a
/// torn line, a peer that is not laconic).
std::optional<RankHello> decode_hello(const std::string& line);
std::optional<JoinAnswer> decode_join_answer(const std::string& line);
std::optional<RankOrder> decode_order(const std::string& line);
std::optional<WorkerExit> decode_worker_exit(const std::string& line);

/// A line's tab-separated fields, unescaped (engine/core/worker_message.hpp's escape_field).
std::vector<std::string> relay_fields(const std::string& line);

}  // namespace laconic::controller
