#pragma once
// The Communicator: the only way workers exchange bytes. A transport provides one primitive, a
// simultaneous send to one peer and receive from another; the collectives (ring allreduce, ring
// allgatherv) are written once on top of it, so every byte they move is counted at the send.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "engine/core/wire_codec.hpp"

namespace laconic::comm::detail {
struct RingGroup;  // schedules.hpp
}  // namespace laconic::comm::detail

namespace laconic::comm {

class ElasticGroup;  // elastic.hpp

/// Bytes this rank handed to the transport and received from it since construction, and the
/// message pattern the network model projects: one message per send_recv that moved anything,
/// sized max(sent, received) since a full-duplex link carries both directions at once.
struct ByteCounters {
  std::uint64_t sent = 0;
  std::uint64_t received = 0;
  std::uint64_t messages = 0;    ///< send_recv calls that sent or received bytes
  std::uint64_t link_bytes = 0;  ///< sum over those calls of max(bytes sent, bytes received)
  /// Of those, the calls on the links between islands (Communicator::set_islands): in a
  /// collective, every call of a phase in which some rank's message crosses islands (the
  /// phase lasts as long as its slowest message); outside one, a call whose own peer is in
  /// another island. 0 without islands.
  std::uint64_t between_messages = 0;
  /// Their bytes: per call, max(bytes sent, bytes received), as link_bytes counts them.
  std::uint64_t between_link_bytes = 0;
  /// The bytes the link between islands carried in those calls' phases: each call's bytes times
  /// its phase's load, the most of the phase's messages that crossed out of one island or into
  /// one at once (they share that link: halving-doubling's partners in the other island, a
  /// hierarchical allreduce's k ranks per island); outside a collective, the call's own bytes.
  std::uint64_t between_shared_bytes = 0;

  /// Adds `other`'s traffic (every counter): exchanges of one step taken together.
  ByteCounters& operator+=(const ByteCounters& other) {
    sent += other.sent;
    received += other.received;
    messages += other.messages;
    link_bytes += other.link_bytes;
    between_messages += other.between_messages;
    between_link_bytes += other.between_link_bytes;
    between_shared_bytes += other.between_shared_bytes;
    return *this;
  }

  /// The traffic between `earlier` and this.
  ByteCounters since(const ByteCounters& earlier) const {
    return {sent - earlier.sent,
            received - earlier.received,
            messages - earlier.messages,
            link_bytes - earlier.link_bytes,
            between_messages - earlier.between_messages,
            between_link_bytes - earlier.between_link_bytes,
            between_shared_bytes - earlier.between_shared_bytes};
  }
};

/// Bytes rank `rank` sends in allreduce_sum of `n` floats over `p` ranks (the ring's schedule
/// replayed without sending): what a dense fp32 exchange costs.
std::uint64_t ring_allreduce_bytes_sent(std::size_t n, int p, int rank);

/// The same for allreduce_sum_halving_doubling (its schedule replayed without sending).
std::uint64_t halving_doubling_bytes_sent(std::size_t n, int p, int rank);

/// The same for allreduce_sum_one_shot: the whole vector to each of the p-1 others.
std::uint64_t one_shot_bytes_sent(std::size_t n, int p);

/// Which allreduce a topology runs. Auto is the one the network model projects fastest for the
/// vector's size and the number of ranks (choose_allreduce).
enum class AllreduceAlgorithm { Auto, Ring, HalvingDoubling, OneShot, Hierarchical };

/// What Auto runs for `n` floats over `p` ranks: the ring or the one-shot exchange, whichever
/// the default link (core/units.hpp's LinkSpec: 1 Gbit/s, 50 us) projects faster from their
/// messages and bytes. For 2 ranks always the one-shot (the ring's bytes in one message instead
/// of two); for more, only vectors of a few KB (the one-shot sends p-1 whole vectors).
AllreduceAlgorithm choose_allreduce(std::size_t n, int p);

/// The bytes of the algorithm that runs (Auto resolved with choose_allreduce).
std::uint64_t allreduce_bytes_sent(std::size_t n, int p, int rank, AllreduceAlgorithm algorithm);

/// Where the ranks of a transport that can tell (threads of one process: MemoryCommunicator;
/// processes on one host: GlooCommunicator's SharedArrivalBoard; processes on several hosts:
/// StampedArrivalBoard) leave their arrival at each exchange, so that each derives how long it
/// would have waited for the slowest without a barrier. Every rank calls arrive() then latest()
/// once per exchange, around a collective every rank takes part in and whose result depends on
/// every rank's input.
class ArrivalBoard {
 public:
  virtual ~ArrivalBoard() = default;
  /// True when every rank posts the moment it arrived on one clock (the host's monotonic clock,
  /// or rank 0's through an estimated offset); false when each posts its derived clock (threads
  /// on CPU clocks, whose collectives' messages carry it: engine/core/rank_clock.hpp).
  virtual bool on_shared_clock() const { return false; }
  /// This rank reached the exchange at `seconds` (on the board's scale, above).
  virtual void arrive(double seconds) = 0;
  /// After the exchange's collective: the latest arrival of any rank at it.
  virtual double latest() = 0;
};

/// Where this rank's clock stands against rank 0's (Communicator::synchronize_clock): rank 0's
/// clock reads `offset` seconds more than this rank's, give or take `error`. Rank 0: 0 and 0.
struct ClockSync {
  double offset = 0;
  double error = 0;        ///< half the shortest round trip of the estimate: a bound, not a spread
  double worst_error = 0;  ///< on rank 0 the largest `error` of any rank; elsewhere this rank's
};

class Communicator {
 public:
  virtual ~Communicator() = default;

  /// The transport's arrival board, or null: waiting is then measured with a barrier.
  virtual ArrivalBoard* arrivals() { return nullptr; }
  /// An elastic run's group (engine/comm/elastic.hpp), or null.
  virtual ElasticGroup* elastic() { return nullptr; }

  virtual int rank() const = 0;
  virtual int size() const = 0;

  /// Sends `send` to rank `to` while receiving exactly `recv.size()` bytes from rank `from`.
  /// Either side may be empty (then it is skipped). Throws CommError on timeout or a lost peer.
  void send_recv(int to, std::span<const std::uint8_t> send, int from, std::span<std::uint8_t> recv);

  /// Sends `bytes` to rank `to` for its receive_sized(), their size first (8 bytes more): a
  /// payload whose size the receiver does not know (a worker's state handed over). Returns the
  /// bytes sent, the size's included.
  std::uint64_t send_sized(int to, std::span<const std::uint8_t> bytes);
  /// What rank `from` sent with send_sized().
  std::vector<std::uint8_t> receive_sized(int from);

  /// Element-wise sum over all ranks, in place (ring reduce-scatter + ring allgather: each rank
  /// sends 2(p-1)/p of the vector).
  void allreduce_sum(std::span<float> data);

  /// The same sum by recursive halving (reduce-scatter) and recursive doubling (allgather):
  /// 2 log2(q) messages instead of the ring's 2(p-1), the same bytes as the ring for a power of
  /// two. With p not a power of two, q is the largest power of two below p: the first 2(p-q)
  /// ranks pair up first (the even one hands its vector to the odd one and gets the result
  /// back at the end).
  void allreduce_sum_halving_doubling(std::span<float> data);

  /// The same sum in one round: each rank sends its whole vector to every other (p-1 messages,
  /// (p-1) vectors sent) and adds what it receives in rank order, so every rank holds the same
  /// bits; it keeps p vectors of scratch meanwhile. For 2 ranks: the ring's bytes in one message
  /// instead of two.
  void allreduce_sum_one_shot(std::span<float> data);

  /// The sum over islands (set_islands, of equal sizes): a ring reduce-scatter inside each
  /// island, then for the chunk each rank holds a ring allreduce between islands among the
  /// ranks of the same place in theirs (in `between`'s format where given: each island's sum
  /// rounded to it first where the codec is a cast, then summed as allreduce_sum_encoded sums),
  /// then a ring allgather inside. The island's sum reaches the others once, spread over its
  /// ranks: 2(k-1) messages inside and 2(m-1) between for k ranks per island and m islands.
  /// InvariantError without islands or with islands of different sizes.
  void allreduce_sum_hierarchical(std::span<float> data, const WireCodec* between = nullptr);

  /// The sum over this rank's island only (set_islands), a ring over its ranks in fp32; returns
  /// the island's size. InvariantError without islands.
  int allreduce_sum_island(std::span<float> data);

  /// The sum by `algorithm` (Auto resolved with choose_allreduce).
  void allreduce_sum(std::span<float> data, AllreduceAlgorithm algorithm);

  /// The same sum with every message in `codec`'s format (fp16, bf16), as PyTorch DDP's fp16
  /// hook and NCCL reduce half precision: `data` must already be in the format on every rank
  /// (codec.round); or in 8 or 4 bits with a scale per chunk (quantized_allreduce), `data` in
  /// fp32, its first encoding the rank's quantization, by the ring only (Auto runs the ring;
  /// another algorithm is an InvariantError), which encodes every partial sum once. A rank that receives a partial sum decodes it, adds its own in fp32 and
  /// rounds the result back to the format before it goes on, so the rounding error grows with
  /// the hops; the one-shot exchange adds every rank's vector in rank order and rounds once.
  /// Every rank ends with the same bits, in the format. The messages are those of the fp32
  /// collective of `algorithm`, each of codec.bytes() of its elements.
  void allreduce_sum_encoded(std::span<float> data, const WireCodec& codec, AllreduceAlgorithm algorithm);

  /// Every rank's payload, indexed by rank (ring: each rank forwards p-1 payloads). Payloads may
  /// differ in size and may be empty.
  std::vector<std::vector<std::uint8_t>> allgatherv(std::span<const std::uint8_t> mine);

  /// The same when every rank's payload has the size of this rank's (a compressor whose
  /// payloads have a fixed size): no round of sizes, p-1 messages instead of 2(p-1).
  std::vector<std::vector<std::uint8_t>> allgather_same_size(std::span<const std::uint8_t> mine);

  /// Returns once every rank has called it.
  void barrier();

  /// Estimates this rank's ClockSync, reading `clock` (seconds): `rounds` ping-pongs between
  /// rank 0 and each other rank in turn, keeping the one with the shortest round trip (rank 0's
  /// reading lies between the ping's send and the pong's arrival on this rank's clock). Then each
  /// rank sends rank 0 its error. Every rank calls it; its messages are measurement, not the
  /// method's: counters() stay as they were.
  ClockSync synchronize_clock(const std::function<double()>& clock, int rounds = 8);

  /// From begin_stamps(arrival) to end_stamps(), every message this rank sends (send_recv with
  /// bytes to send) carries an 8-byte stamp beside it, the latest arrival this rank knows of, and
  /// every message it receives brings the sender's, kept if later. After a collective whose
  /// result depends on every rank's input, end_stamps() is the latest arrival of any rank. The
  /// stamps are measurement: counters() do not count them.
  void begin_stamps(double arrival);
  double end_stamps();

  /// Sends `send` to rank `to` for its receive_from_any(): messages that a receiver takes from
  /// whichever sender is first (an asynchronous parameter server). They travel on a tag of
  /// their own, in order per sender.
  void send_to_any_receiver(int to, std::span<const std::uint8_t> send);

  /// Receives exactly `recv.size()` bytes sent with send_to_any_receiver() by any of `from`;
  /// returns the sender's rank. Throws CommError on timeout.
  int receive_from_any(std::span<const int> from, std::span<std::uint8_t> recv);

  const ByteCounters& counters() const { return counters_; }

  /// The island of each rank (a cluster of islands joined by slower links: network = cluster
  /// {}), or empty for one link between all. From then on the counters tell the messages on the
  /// links between islands apart (ByteCounters::between_messages). InvariantError unless it has
  /// one entry per rank.
  void set_islands(std::vector<int> island_of_rank);
  const std::vector<int>& islands() const { return islands_; }

  /// The ranks that take part in the collectives from now on (workers that leave and join), in
  /// rank order, this rank among them; empty (or every rank): all. The ring allreduce and the ring
  /// allgathers then run around them alone (allreduce_sum with any algorithm runs the ring),
  /// allgatherv returns one payload per member in their order, and barrier() waits for them.
  /// Point-to-point messages (send_recv) still name world ranks. Every member must set the same
  /// list before the next collective. Not with islands yet. InvariantError otherwise.
  void set_members(std::vector<int> ranks);
  const std::vector<int>& members() const { return members_; }
  /// How many ranks take part: the members' count, else size().
  int present() const { return members_.empty() ? size() : static_cast<int>(members_.size()); }

  /// Holds every message back by `seconds` before it is sent (send_recv and
  /// send_to_any_receiver): an emulated link's one-way latency where the kernel cannot add it;
  /// a message to another island (set_islands) by `between_islands` where it is given (>= 0).
  void set_message_delay(double seconds, double between_islands = -1) {
    message_delay_ = seconds;
    between_delay_ = between_islands;
  }
  double message_delay() const { return message_delay_; }

 protected:
  /// Every peer's message numbers start again from 0 (a transport's new connections).
  void restart_message_numbers() {
    sent_to_.clear();
    received_from_.clear();
  }

  /// The transport's primitive behind send_recv. An empty side is skipped. A message's tag is
  /// its number among the messages from its sender to its receiver, so both ends agree on it
  /// whatever else each of them exchanges with other ranks (a parameter server talks to every
  /// worker, each worker to the server only).
  virtual void transfer(int to, std::span<const std::uint8_t> send, std::uint64_t send_tag, int from,
                        std::span<std::uint8_t> recv, std::uint64_t recv_tag) = 0;

  /// transfer() with a stamp beside each non-empty side: `stamp_out` to `to` with `send`,
  /// `stamp_in` from `from` with `recv`, on tags of their own (the message's | kStampTag). This
  /// one moves the stamps after the data, a second round; a transport posts them together.
  virtual void transfer_stamped(int to, std::span<const std::uint8_t> send, std::uint64_t send_tag, int from,
                                std::span<std::uint8_t> recv, std::uint64_t recv_tag, double stamp_out,
                                double& stamp_in);

  /// The transport's receive from whichever of `from` sends on `tag` first; returns its rank.
  virtual int transfer_from_any(std::span<const int> from, std::span<std::uint8_t> recv, std::uint64_t tag) = 0;

  /// The tag of send_to_any_receiver() messages: above every per-peer message number.
  static constexpr std::uint64_t kAnySourceTag = std::uint64_t{1} << 62;
  /// Or'ed into a message's tag for the stamp beside it.
  static constexpr std::uint64_t kStampTag = std::uint64_t{1} << 61;

 private:
  void delay_message(int to) const;
  /// Counts one call of `send` bytes to `to` and `recv` bytes from `from` (either may be empty).
  void count(int to, std::size_t send, int from, std::size_t recv);
  /// The call's load on the links between islands, 0 when its phase stays inside them: in a
  /// collective, the most messages of the same phase (the same shift around the ranks, or for a
  /// pairwise exchange the same partner mask) that leave one island or enter one; outside one, 1
  /// when its own peer is in another island.
  int between_load(int to, int from) const;
  /// Marks the collectives' calls, whose phases every rank runs alike (between_load).
  class CollectiveScope {
   public:
    explicit CollectiveScope(Communicator& comm) : comm_(comm) { ++comm_.collective_depth_; }
    ~CollectiveScope() { --comm_.collective_depth_; }
    CollectiveScope(const CollectiveScope&) = delete;
    CollectiveScope& operator=(const CollectiveScope&) = delete;

   private:
    Communicator& comm_;
  };
  /// The ring allgather's p-1 steps: each rank forwards the payload it got last; `out` holds this
  /// rank's own, `sizes` every rank's.
  void forward_payloads(std::vector<std::vector<std::uint8_t>>& out, const std::vector<std::uint64_t>& sizes);
  /// `floats` of scratch for the collectives' incoming chunks, kept across calls (no allocation
  /// on the hot path once it has grown to the largest exchange).
  std::span<float> scratch(std::size_t floats);
  /// `bytes` of scratch for encoded messages, kept across calls like scratch().
  std::span<std::uint8_t> wire_scratch(std::size_t bytes);
  /// The ring's halves over `g` (ring_allreduce.cpp): after the reduce-scatter, position r holds
  /// the group's sum of chunk r + 1 of data split g.size() ways; the allgather spreads them.
  void ring_reduce_scatter(std::span<float> data, const detail::RingGroup& g);
  void ring_allgather(std::span<float> data, const detail::RingGroup& g);
  detail::RingGroup world_ring() const;
  /// This rank's island's ranks in rank order, and its place among them.
  detail::RingGroup island_ring() const;
  void allreduce_ring_encoded(std::span<float> data, const WireCodec& codec, const detail::RingGroup& g);
  void allreduce_one_shot_encoded(std::span<float> data, const WireCodec& codec);
  void allreduce_halving_doubling_encoded(std::span<float> data, const WireCodec& codec);

  ByteCounters counters_;
  std::vector<int> islands_;
  std::vector<int> members_;  // empty: every rank
  int collective_depth_ = 0;
  int forced_phase_ = -1;  // a hierarchical allreduce's phase: its load between islands (0 inside); -1 none
  double message_delay_ = 0;
  double between_delay_ = -1;
  bool stamping_ = false;
  double stamp_ = 0;                                    // while stamping: the latest arrival this rank knows of
  std::vector<std::uint64_t> sent_to_, received_from_;  // messages per peer so far
  std::vector<float> scratch_;
  std::vector<std::uint8_t> wire_scratch_;
};

}  // namespace laconic::comm
