#include "engine/comm/gloo_communicator.hpp"

#include <gloo/common/error.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>

#include <atomic>
#include <csignal>
#include <exception>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "engine/comm/shared_arrival_board.hpp"
#include "engine/comm/stamped_arrival_board.hpp"
#include "engine/core/error.hpp"
#include "engine/core/periodic_thread.hpp"
#include "engine/core/rank_clock.hpp"

namespace laconic::comm {

namespace {

// laconic's store seen through Gloo's Store interface, every wait bounded by the run's timeout.
class GlooStore : public gloo::rendezvous::Store {
 public:
  GlooStore(KeyValueStore& store, std::chrono::milliseconds timeout) : store_(store), timeout_(timeout) {}
  void set(const std::string& key, const std::vector<char>& data) override { store_.set(key, data); }
  std::vector<char> get(const std::string& key) override { return store_.get(key, timeout_); }
  void wait(const std::vector<std::string>& keys) override { store_.wait(keys, timeout_); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override {
    store_.wait(keys, timeout);
  }

 private:
  KeyValueStore& store_;
  std::chrono::milliseconds timeout_;
};

// Gloo writes to its sockets with writev, which raises SIGPIPE when the peer has closed its end: a rank
// that went away would kill this process before Gloo could report it. Ignored, the write fails with EPIPE
// and the collective throws, which is what a rank that loses a peer must see.
void report_broken_pipes_as_errors() { std::signal(SIGPIPE, SIG_IGN); }

}  // namespace

// An elastic run's rank, while it waits in a transfer: a thread looks in the store every 10 ms
// whether a member of its generation posted a failure, and ends the wait if one did. A member
// that sees a peer die closes its connections, but a rank blocked on that member alone is not
// always told by Gloo (it then waited out the run's timeout); the store tells every member.
class FailureWatch {
 public:
  explicit FailureWatch(std::shared_ptr<ElasticMembership> membership)
      : membership_(std::move(membership)), generation_(membership_->current().number) {}

  int generation() const { return generation_; }
  void set_generation(int number) { generation_ = number; }

  /// A transfer's buffers watched while it waits (null ones skipped), for its lifetime.
  class Waiting {
   public:
    Waiting(FailureWatch& watch, std::initializer_list<gloo::transport::UnboundBuffer*> buffers) : watch_(watch) {
      std::lock_guard<std::mutex> lock(watch_.mutex_);
      for (auto* b : buffers)
        if (b != nullptr) watch_.buffers_.push_back(b);
    }
    ~Waiting() {
      std::lock_guard<std::mutex> lock(watch_.mutex_);
      watch_.buffers_.clear();  // one transfer at a time on a rank's communicator
    }
    Waiting(const Waiting&) = delete;
    Waiting& operator=(const Waiting&) = delete;

   private:
    FailureWatch& watch_;
  };

 private:
  // The store is read without the lock (a transfer starting meanwhile does not wait for it); the
  // buffers are aborted under it, before their transfer ends and frees them.
  void check() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (buffers_.empty()) return;
    }
    const int generation = generation_;
    if (!membership_->failure_posted(generation)) return;
    std::lock_guard<std::mutex> lock(mutex_);
    if (generation != generation_) return;  // regrouped meanwhile: not this generation's transfer
    for (auto* b : buffers_) {
      b->abortWaitRecv();
      b->abortWaitSend();
    }
    buffers_.clear();
  }

  std::shared_ptr<ElasticMembership> membership_;
  std::atomic<int> generation_;
  std::mutex mutex_;
  std::vector<gloo::transport::UnboundBuffer*> buffers_;                       // those of the transfer waiting now
  PeriodicThread thread_{std::chrono::milliseconds(10), [this] { check(); }};  // last
};

struct GlooCommunicator::Impl {
  std::shared_ptr<gloo::transport::Device> device;
  std::shared_ptr<gloo::rendezvous::Context> context;
  /// An elastic run's: each world rank's place in the context (-1 outside); empty: the same.
  std::vector<int> place;
  std::uint64_t die_before_send = 0;             // GlooOptions'
  std::uint64_t sends = 0;                       // messages out so far
  SharedBoardSetup arrivals;                     // ranks on one host
  std::unique_ptr<StampedArrivalBoard> stamped;  // ranks on several hosts
  std::unique_ptr<FailureWatch> watch;           // an elastic run's

  /// Posts the receives and sends of one transfer, stamps beside them when given, then waits for all.
  void exchange(int rank, std::chrono::milliseconds timeout, int to, std::span<const std::uint8_t> send,
                std::uint64_t send_tag, int from, std::span<std::uint8_t> recv, std::uint64_t recv_tag,
                double* stamp_out, double* stamp_in);
  /// A world rank's place in the context.
  int at(int rank) const {
    if (place.empty()) return rank;
    const int p = place.at(static_cast<std::size_t>(rank));
    if (p < 0) throw CommError(str_cat("rank ", rank, " is not in this generation of the elastic run"));
    return p;
  }
  /// Connects `ranks` (world ranks in rank order, `rank` among them) through `store`.
  void connect(KeyValueStore& store, int rank, const std::vector<int>& ranks, std::chrono::milliseconds timeout);
};

void GlooCommunicator::Impl::connect(KeyValueStore& store, int rank, const std::vector<int>& ranks,
                                     std::chrono::milliseconds timeout) {
  context.reset();
  place.assign(place.size(), -1);
  for (std::size_t i = 0; i < ranks.size(); ++i) place.at(static_cast<std::size_t>(ranks[i])) = static_cast<int>(i);
  GlooStore gloo_store(store, timeout);
  auto next = std::make_shared<gloo::rendezvous::Context>(at(rank), static_cast<int>(ranks.size()));
  next->setTimeout(timeout);
  next->connectFullMesh(gloo_store, device);
  context = std::move(next);
}

ElasticGroup* GlooCommunicator::elastic() { return elastic_ ? this : nullptr; }

void GlooCommunicator::abandon() {
  LACONIC_ENFORCE(elastic_ != nullptr, "only an elastic run's ranks abandon their connections");
  elastic_->post_failure(impl_->watch->generation());  // every member waiting in it stops
  impl_->context.reset();                              // and a peer waiting on this rank fails at once
}

void GlooCommunicator::regroup(const Generation& g) {
  LACONIC_ENFORCE(elastic_ != nullptr, "only an elastic run's ranks regroup");
  try {
    impl_->connect(*elastic_->rendezvous_store(g), rank_, g.members, timeout_);
  } catch (const gloo::Exception& e) {
    throw CommError(str_cat("rank ", rank_, ": the elastic run's generation ", g.number, " did not connect within ",
                            timeout_.count(), " ms: ", e.what()));
  }
  impl_->watch->set_generation(g.number);
  restart_message_numbers();
  set_members(g.members);
}

ArrivalBoard* GlooCommunicator::arrivals() {
  if (impl_->arrivals.board) return impl_->arrivals.board.get();
  return impl_->stamped.get();
}

const StampedArrivalBoard* GlooCommunicator::stamped_arrivals() const { return impl_->stamped.get(); }

GlooCommunicator::GlooCommunicator(const GlooOptions& options)
    : rank_(options.rank),
      size_(options.size),
      timeout_(options.timeout),
      elastic_(options.elastic),
      impl_(std::make_unique<Impl>()) {
  impl_->die_before_send = options.die_before_send;
  if (options.size < 1 || options.rank < 0 || options.rank >= options.size)
    throw ConfigError(str_cat("rank must be in [0, ", options.size, "), got ", options.rank));
  report_broken_pipes_as_errors();
  try {
    gloo::transport::tcp::attr attr;
    if (options.interface.empty())
      attr.hostname = options.hostname;
    else
      attr.iface = options.interface;
    impl_->device = gloo::transport::tcp::CreateDevice(attr);
    std::shared_ptr<KeyValueStore> store = options.store ? options.store : open_file_store(options.store_dir);
    if (elastic_) {  // its current generation's members; waiting measured with a barrier
      impl_->place.assign(static_cast<std::size_t>(options.size), -1);
      const Generation& g = elastic_->current();
      impl_->connect(g.number == 0 ? *store : *elastic_->rendezvous_store(g), rank_, g.members, options.timeout);
      impl_->watch = std::make_unique<FailureWatch>(elastic_);
      set_members(g.members);
      return;
    }
    impl_->arrivals =
        open_shared_arrival_board(*store, options.rank, options.size, options.timeout, !options.stamped_arrivals);
    GlooStore gloo_store(*store, options.timeout);
    impl_->context = std::make_shared<gloo::rendezvous::Context>(options.rank, options.size);
    impl_->context->setTimeout(options.timeout);
    impl_->context->connectFullMesh(gloo_store, impl_->device);
    remove_shared_board_file(impl_->arrivals);  // every rank has mapped it before connecting
    // Every rank agrees: rank 0 published a board's path to all, or none.
    if (!impl_->arrivals.board && options.size > 1)
      impl_->stamped = std::make_unique<StampedArrivalBoard>(*this, [] { return rank_seconds(); });
  } catch (const gloo::Exception& e) {
    remove_shared_board_file(impl_->arrivals);
    throw CommError(str_cat("rank ", options.rank, " of ", options.size, ": rendezvous through '",
                            options.store ? std::string("the run's store") : options.store_dir, "' failed within ",
                            options.timeout.count(), " ms: ", e.what()));
  } catch (CommError& e) {
    remove_shared_board_file(impl_->arrivals);
    e.add_context(str_cat("rank ", options.rank, " of ", options.size, ": rendezvous"));
    throw;
  }
}

GlooCommunicator::~GlooCommunicator() = default;

void GlooCommunicator::Impl::exchange(int rank, std::chrono::milliseconds timeout, int to,
                                      std::span<const std::uint8_t> send, std::uint64_t send_tag, int from,
                                      std::span<std::uint8_t> recv, std::uint64_t recv_tag, double* stamp_out,
                                      double* stamp_in) {
  if (!context) throw CommError(str_cat("rank ", rank, ": its connections were abandoned (elastic run)"));
  try {
    std::unique_ptr<gloo::transport::UnboundBuffer> in, out, in_stamp, out_stamp;
    // The receive is posted first, then the send, whose end is waited for first: a rank whose
    // receive fails (its sender died, which makes posting it throw once Gloo has seen the
    // connection close) still delivers what it forwards, so that a peer that can complete the
    // collective does (an elastic run then goes on from that peer's step). Gloo's unbound buffer
    // takes a non-const pointer but only reads from it when sending.
    std::exception_ptr failed_receive;
    try {
      if (!recv.empty()) {
        in = context->createUnboundBuffer(recv.data(), recv.size());
        in->recv(at(from), recv_tag);
        if (stamp_in != nullptr) {
          in_stamp = context->createUnboundBuffer(stamp_in, sizeof *stamp_in);
          in_stamp->recv(at(from), recv_tag | kStampTag);
        }
      }
    } catch (const gloo::Exception&) {
      failed_receive = std::current_exception();
    }
    if (!send.empty()) {
      if (++sends == die_before_send) ::raise(SIGKILL);  // a fault asked for: as kill -9 would
      out = context->createUnboundBuffer(const_cast<std::uint8_t*>(send.data()), send.size());
      out->send(at(to), send_tag);
      if (stamp_out != nullptr) {
        out_stamp = context->createUnboundBuffer(stamp_out, sizeof *stamp_out);
        out_stamp->send(at(to), send_tag | kStampTag);
      }
    }
    std::optional<FailureWatch::Waiting> watched;  // ends before the buffers do
    if (watch) watched.emplace(*watch, std::initializer_list{in.get(), in_stamp.get(), out.get(), out_stamp.get()});
    for (auto* buffer : {out.get(), out_stamp.get()})
      if (buffer && !buffer->waitSend(timeout))
        throw CommError(str_cat("rank ", rank, ": send to rank ", to, " ended: a member of the elastic run failed"));
    if (failed_receive) std::rethrow_exception(failed_receive);
    for (auto* buffer : {in.get(), in_stamp.get()})
      if (buffer && !buffer->waitRecv(timeout))
        throw CommError(
            str_cat("rank ", rank, ": receive from rank ", from, " ended: a member of the elastic run failed"));
  } catch (const gloo::Exception& e) {
    throw CommError(str_cat("rank ", rank, ": exchange with ranks ", to, "/", from, " (", send.size(), " bytes out, ",
                            recv.size(), " bytes in) failed: ", e.what()));
  }
}

void GlooCommunicator::transfer(int to, std::span<const std::uint8_t> send, std::uint64_t send_tag, int from,
                                std::span<std::uint8_t> recv, std::uint64_t recv_tag) {
  impl_->exchange(rank_, timeout_, to, send, send_tag, from, recv, recv_tag, nullptr, nullptr);
}

void GlooCommunicator::transfer_stamped(int to, std::span<const std::uint8_t> send, std::uint64_t send_tag, int from,
                                        std::span<std::uint8_t> recv, std::uint64_t recv_tag, double stamp_out,
                                        double& stamp_in) {
  impl_->exchange(rank_, timeout_, to, send, send_tag, from, recv, recv_tag, &stamp_out, &stamp_in);
}

int GlooCommunicator::transfer_from_any(std::span<const int> from, std::span<std::uint8_t> recv, std::uint64_t tag) {
  try {
    LACONIC_ENFORCE(!elastic_, "an elastic run has no receive from any rank");
    auto in = impl_->context->createUnboundBuffer(recv.data(), recv.size());
    in->recv(std::vector<int>(from.begin(), from.end()), tag);
    int sender = -1;
    if (!in->waitRecv(&sender, timeout_))
      throw CommError(str_cat("rank ", rank_, ": receive from any of ", from.size(), " ranks was aborted"));
    return sender;
  } catch (const gloo::Exception& e) {
    throw CommError(str_cat("rank ", rank_, ": receive from any of ", from.size(), " ranks (", recv.size(),
                            " bytes) failed: ", e.what()));
  }
}

}  // namespace laconic::comm
