#pragma once
// An elastic run's membership (elastic = true; issue 68): which worker processes train together,
// agreed through the run's rendezvous store. The run starts as generation 0 with every rank. A
// member that loses a peer (kill -9, a crash) abandons its connections, which fails its peers'
// transfers in turn, and reports how many steps it completed; worker 0 waits until every member
// has reported or the controller has posted it gone, and posts the next generation: those who
// reported, from the most advanced one's step. A worker the controller relaunched asks to join;
// worker 0 admits it into a generation that begins at the step after the one it saw the request
// at, which every member reads before that step (each step's exchange needs worker 0's part, sent
// after the posting). Worker 0 itself never leaves: losing it fails the run.
//
// A member whose process lives but whose host dropped off (a link down, a partition) still
// reaches the store, which is a file or another host's server. So every report comes with a
// check of its own: the member connects to worker 0's Beacon (engine/comm/reachability.hpp)
// within the run's timeout, and one that cannot says so instead of its steps. Worker 0 leaves it
// out of the next generation and the member ends with the reason, to be relaunched; a relaunch
// asks to join only once it reaches worker 0. Reaching worker 0 is checked, not reaching every
// member: a partition that separates two members both reaching worker 0 still fails the run.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/comm/reachability.hpp"
#include "engine/comm/store.hpp"

namespace laconic::comm {

/// One generation of an elastic run's group.
struct Generation {
  int number = 0;
  std::vector<int> members;       ///< world ranks, in rank order
  std::vector<int> incarnations;  ///< per member: how many times its rank was relaunched before
  std::vector<int> joiners;       ///< the members relaunched into it, in rank order
  std::vector<int> leavers;       ///< the previous generation's members gone from it
  std::int64_t step = 0;          ///< the global step it trains from
  /// The member whose state the others take when they are behind it: the lowest rank of those
  /// that completed the most steps.
  int source = 0;
  /// Per member: the steps it had completed when the generation formed; -1 for a joiner.
  std::vector<std::int64_t> completed;
  /// Seconds worker 0 waited for the others' reports after a failure (0 for an admission).
  double quorum_seconds = 0;

  bool has(int rank) const;
  /// Whether `rank` takes the source's state: a joiner, or a member behind the source.
  bool receives(int rank) const;
  std::string to_text() const;
  static Generation parse(const std::string& text);
};

/// The key under which the controller posts that `rank`'s `incarnation`-th relaunch (0: its
/// first launch) died.
std::string elastic_gone_key(int rank, int incarnation);

/// The key under which worker 0 posts its Beacon's address.
std::string elastic_beacon_key();

class ElasticMembership {
 public:
  /// `store` is the run's; `incarnation` the relaunches of `rank` before this process (0: launched
  /// with the run). Worker 0 listens with its Beacon on `where` (the address its Gloo connections
  /// use) and posts the beacon's address.
  ElasticMembership(std::shared_ptr<KeyValueStore> store, int rank, int world, int incarnation,
                    std::chrono::milliseconds timeout, const ListenAddress& where = {});
  ~ElasticMembership();

  int incarnation() const { return incarnation_; }
  bool relaunched() const { return incarnation_ > 0; }
  const Generation& current() const { return current_; }

  /// A relaunched worker: waits until it reaches worker 0 (calling `waiting` with the reason
  /// after each try, a try bounded by the run's timeout, one a second), then asks to join and
  /// waits up to the run's timeout to be admitted; the generation it joins, or none when the run
  /// has ended meanwhile (close()).
  std::optional<Generation> await_admission(const std::function<void(const std::string&)>& waiting = {});
  /// Every member at every step's start: the generation that begins at `step`, if one does.
  /// Worker 0 first admits the relaunched workers waiting (posting a generation from step + 1),
  /// unless `admit` is false (the run's end).
  std::optional<Generation> due(std::int64_t step, bool admit = true);
  /// After this member lost a peer, having completed `completed` steps: the next generation, of
  /// the members that reported and reach worker 0. Worker 0 waits up to twice the run's timeout
  /// for the reports (each member first tries to reach it, for up to the timeout), the others as
  /// long for its posting. CommError when it does not come, and for a member that could not
  /// reach worker 0, with the reason.
  Generation after_failure(std::int64_t completed);
  /// A member that lost a connection in generation `number` says so, so that the others' waits
  /// in it end at once (GlooCommunicator watches), whatever their own connections show.
  void post_failure(int number);
  /// Whether a member posted a failure in generation `number`; safe from any thread.
  bool failure_posted(int number) const;
  /// Worker 0 at an epoch's end: whether the run stops there. Told through the store, not the
  /// members' connections, so that a loss cannot leave some members told and others not.
  void post_stop(std::int64_t epoch, bool stop);
  /// The other members: worker 0's decision at the epoch's end (CommError after the timeout).
  bool stop_posted(std::int64_t epoch);
  /// Worker 0 at the run's end: workers still waiting to join go home.
  void close();
  /// The store a generation's members meet under; its waits end (CommError) once a member of the
  /// generation is posted gone.
  std::shared_ptr<KeyValueStore> rendezvous_store(const Generation& g) const;
  /// `g` is the group from now on.
  void adopt(const Generation& g);

 private:
  /// Worker 0: the ranks outside the group whose relaunch asks to join (incarnations in next_).
  std::vector<int> waiting_joiners();
  Generation posted_after_failure(std::int64_t completed);
  /// The address of worker 0's beacon, which it posts when it starts.
  std::string beacon_address();

  std::shared_ptr<KeyValueStore> store_;
  int rank_;
  int world_;
  int incarnation_;
  std::chrono::milliseconds timeout_;
  Generation current_;
  std::optional<Generation> pending_;  ///< an admission posted, beginning at its step
  std::vector<int> incarnation_of_;    ///< worker 0: each rank's latest known incarnation
  std::unique_ptr<Beacon> beacon_;     ///< worker 0's
};

/// What an elastic run's worker loop asks of its communicator (Communicator::elastic()).
class ElasticGroup {
 public:
  virtual ~ElasticGroup() = default;
  virtual ElasticMembership& membership() = 0;
  /// Closes this rank's connections at once, so that a peer blocked on it fails too.
  virtual void abandon() = 0;
  /// Connects the members of `g` (every member calls it; ranks keep their world numbers, the
  /// collectives run around the members, message numbers start again).
  virtual void regroup(const Generation& g) = 0;
};

}  // namespace laconic::comm
