#include "engine/topology/parameter_server/asynchronous_server.hpp"

#include <algorithm>
#include <chrono>
#include <limits>

#include "engine/core/error.hpp"
#include "engine/core/rank_clock.hpp"
#include "engine/topology/parameter_server/protocol.hpp"

namespace laconic::topology {

AsynchronousServer::AsynchronousServer(ParameterServerOptions options, std::int64_t staleness, int workers,
                                       std::size_t n)
    : options_(options),
      staleness_(staleness),
      workers_(static_cast<std::size_t>(workers)),
      n_(n),
      clock_(workers_, 0),
      read_version_(workers_, 0),
      read_staleness_(workers_, 0),
      active_(workers_, true),
      held_(workers_, false),
      sent_(workers_, std::vector<float>(n)),
      current_(n),
      gradient_(n),
      change_(n),
      decoded_(n) {}

std::uint64_t AsynchronousServer::release(comm::Communicator& comm, std::span<compress::Compressor* const> pull,
                                          ServerModel& model) {
  std::uint64_t replies = 0;
  std::int64_t slowest = std::numeric_limits<std::int64_t>::max();
  for (std::size_t w = 0; w < workers_; ++w)
    if (active_[w]) slowest = std::min(slowest, clock_[w]);
  model.read_weights(current_);
  for (std::size_t w = 0; w < workers_; ++w) {
    if (!held_[w] || (active_[w] && clock_[w] - slowest > staleness_)) continue;
    held_[w] = false;
    read_version_[w] = version_;
    read_staleness_[w] = active_[w] && slowest != std::numeric_limits<std::int64_t>::max() ? clock_[w] - slowest : 0;
    for (std::size_t i = 0; i < n_; ++i) change_[i] = current_[i] - sent_[w][i];
    if (options_.compress_pull) {
      pull[w]->compress(change_, reply_);
      std::fill(decoded_.begin(), decoded_.end(), 0.0f);
      pull[w]->decompress_add(reply_, decoded_);
      for (std::size_t i = 0; i < n_; ++i) sent_[w][i] += decoded_[i];
    } else {
      encode_dense(change_, reply_);
      sent_[w] = current_;
    }
    send_pull(comm, static_cast<int>(w), PullHeader{reply_.size(), 0, 0}, reply_);
    ++replies;
  }
  return replies;
}

void AsynchronousServer::serve(comm::Communicator& comm, compress::Compressor& compressor,
                               std::span<compress::Compressor* const> pull, ServerModel& model) {
  LACONIC_ENFORCE(!options_.compress_pull || pull.size() == workers_, "compressed pulls need one pull compressor ",
                  "per worker: ", workers_, " workers, ", pull.size(), " given");
  std::vector<int> ranks(workers_);
  for (std::size_t w = 0; w < workers_; ++w) ranks[w] = static_cast<int>(w);
  // Every worker starts from the initial weights: what each was last sent.
  model.read_weights(current_);
  for (auto& s : sent_) s = current_;
  AppliedUpdate report;
  std::size_t finished = 0;
  while (finished < workers_) {
    const comm::ByteCounters before = comm.counters();
    double t = rank_seconds();
    std::array<std::uint8_t, PushHeader::kBytes> bytes{};
    const auto w = static_cast<std::size_t>(comm.receive_from_any(ranks, bytes));
    const PushHeader header = PushHeader::decode(bytes, static_cast<int>(w));
    if (header.done) {
      active_[w] = false;
      ++finished;
      release(comm, pull, model);  // a finished worker no longer holds the others back
      continue;
    }
    incoming_.resize(header.payload_bytes);
    comm.send_recv(static_cast<int>(w), {}, static_cast<int>(w), incoming_);
    report.stats.time_communicate = seconds_since(t);
    t = rank_seconds();
    std::fill(gradient_.begin(), gradient_.end(), 0.0f);
    if (options_.compress_push)
      compressor.decompress_add(incoming_, gradient_);
    else
      add_dense(incoming_, gradient_);
    report.stats.time_decompress = seconds_since(t);
    report.worker = static_cast<int>(w);
    report.staleness = read_staleness_[w];
    report.lag = version_ - read_version_[w];
    LACONIC_ENFORCE(report.staleness <= staleness_, "worker ", w, " computed on weights read ", report.staleness,
                    " steps ahead of the slowest, above the bound ", staleness_);
    t = rank_seconds();
    model.apply(gradient_);
    ++version_;
    ++clock_[w];
    held_[w] = true;
    const std::uint64_t replies = release(comm, pull, model);
    report.stats.time_compress = seconds_since(t);  // the optimizer step and the replies
    report.stats.traffic = comm.counters().since(before);
    report.stats.bytes_sent = report.stats.traffic.sent;
    report.stats.bytes_received = report.stats.traffic.received;
    report.stats.payload_bytes = header.payload_bytes;
    report.stats.bytes_dense = replies * (PullHeader::kBytes + 4 * n_);  // the replies are dense
    model.on_update(report);
  }
}

}  // namespace laconic::topology
