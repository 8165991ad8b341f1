#pragma once
// The Communicator over Gloo's TCP transport; rendezvous through a KeyValueStore
// (engine/comm/store.hpp): a private directory on one host, a TCP or Redis store across hosts.
#include <chrono>
#include <memory>
#include <string>

#include "engine/comm/communicator.hpp"
#include "engine/comm/elastic.hpp"
#include "engine/comm/store.hpp"

namespace laconic::comm {

class StampedArrivalBoard;

struct GlooOptions {
  int rank = 0;
  int size = 1;
  /// Where the ranks meet: keys under a prefix of this run's own. When null, `store_dir`.
  std::shared_ptr<KeyValueStore> store;
  std::string store_dir;               ///< a directory private to the run (when no `store`)
  std::string hostname = "127.0.0.1";  ///< address this rank listens on
  /// Network interface to listen on (GLOO_SOCKET_IFNAME); when set, `hostname` is not used.
  std::string interface;
  std::chrono::milliseconds timeout{60'000};  ///< limit for rendezvous and for every transfer
  /// Measure waiting with stamps beside the messages (StampedArrivalBoard) even when every rank
  /// runs on one host, where a shared board would do: what several hosts get. Rank 0's value
  /// decides for every rank.
  bool stamped_arrivals = false;
  /// An elastic run's membership (engine/comm/elastic.hpp): the ranks connect its current
  /// generation (a relaunched worker the one it was admitted to), and time_wait is measured with
  /// a barrier (no arrival board). Null: every rank, for the whole run.
  std::shared_ptr<ElasticMembership> elastic;
  /// A real fault at a chosen moment (LACONIC_FAULT_KILL): the process kills itself with SIGKILL
  /// just before its `die_before_send`-th message out (counted from 1 since construction); 0 never.
  std::uint64_t die_before_send = 0;
};

class GlooCommunicator : public Communicator, public ElasticGroup {
 public:
  /// Rendezvous with the other ranks and connect a full mesh; CommError on timeout. Sets SIGPIPE to be
  /// ignored for the whole process, so that a peer that went away is a CommError, not a fatal signal.
  explicit GlooCommunicator(const GlooOptions& options);
  ~GlooCommunicator() override;

  /// Ranks that all run on one host share an arrival board (SharedArrivalBoard); ranks on several
  /// hosts (or with `stamped_arrivals`) stamp their messages (StampedArrivalBoard). Null for one rank.
  ArrivalBoard* arrivals() override;
  /// The stamped board (its clock offsets: on rank 0 their worst_error bounds every rank's); null
  /// with a shared board or one rank.
  const StampedArrivalBoard* stamped_arrivals() const;
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  /// Itself when the run is elastic (GlooOptions::elastic), else null.
  ElasticGroup* elastic() override;
  ElasticMembership& membership() override { return *elastic_; }
  void abandon() override;
  void regroup(const Generation& g) override;

 protected:
  void transfer(int to, std::span<const std::uint8_t> send, std::uint64_t send_tag, int from,
                std::span<std::uint8_t> recv, std::uint64_t recv_tag) override;
  void transfer_stamped(int to, std::span<const std::uint8_t> send, std::uint64_t send_tag, int from,
                        std::span<std::uint8_t> recv, std::uint64_t recv_tag, double stamp_out,
                        double& stamp_in) override;
  int transfer_from_any(std::span<const int> from, std::span<std::uint8_t> recv, std::uint64_t tag) override;

 private:
  struct Impl;  // keeps Gloo's headers out of the engine's public interface
  int rank_;
  int size_;
  std::chrono::milliseconds timeout_;
  std::shared_ptr<ElasticMembership> elastic_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace laconic::comm
