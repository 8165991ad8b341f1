#include "engine/comm/gloo_communicator.hpp"

#include <gloo/common/error.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>

#include <csignal>

#include "engine/comm/shared_arrival_board.hpp"
#include "engine/core/error.hpp"

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

struct GlooCommunicator::Impl {
  std::shared_ptr<gloo::transport::Device> device;
  std::shared_ptr<gloo::rendezvous::Context> context;
  SharedBoardSetup arrivals;  // ranks on one host
};

ArrivalBoard* GlooCommunicator::arrivals() { return impl_->arrivals.board.get(); }

GlooCommunicator::GlooCommunicator(const GlooOptions& options)
    : rank_(options.rank), size_(options.size), timeout_(options.timeout), impl_(std::make_unique<Impl>()) {
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
    impl_->arrivals = open_shared_arrival_board(*store, options.rank, options.size, options.timeout);
    GlooStore gloo_store(*store, options.timeout);
    impl_->context = std::make_shared<gloo::rendezvous::Context>(options.rank, options.size);
    impl_->context->setTimeout(options.timeout);
    impl_->context->connectFullMesh(gloo_store, impl_->device);
    remove_shared_board_file(impl_->arrivals);  // every rank has mapped it before connecting
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

void GlooCommunicator::transfer(int to, std::span<const std::uint8_t> send, std::uint64_t send_tag, int from,
                                std::span<std::uint8_t> recv, std::uint64_t recv_tag) {
  try {
    std::unique_ptr<gloo::transport::UnboundBuffer> out, in;
    // Gloo's unbound buffer takes a non-const pointer but only reads from it when sending.
    if (!recv.empty()) {
      in = impl_->context->createUnboundBuffer(recv.data(), recv.size());
      in->recv(from, recv_tag);
    }
    if (!send.empty()) {
      out = impl_->context->createUnboundBuffer(const_cast<std::uint8_t*>(send.data()), send.size());
      out->send(to, send_tag);
    }
    if (in && !in->waitRecv(timeout_))
      throw CommError(str_cat("rank ", rank_, ": receive from rank ", from, " was aborted"));
    if (out && !out->waitSend(timeout_))
      throw CommError(str_cat("rank ", rank_, ": send to rank ", to, " was aborted"));
  } catch (const gloo::Exception& e) {
    throw CommError(str_cat("rank ", rank_, ": exchange with ranks ", to, "/", from, " (", send.size(), " bytes out, ",
                            recv.size(), " bytes in) failed: ", e.what()));
  }
}

int GlooCommunicator::transfer_from_any(std::span<const int> from, std::span<std::uint8_t> recv, std::uint64_t tag) {
  try {
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
