#include "engine/topology/parameter_server/synchronous_server.hpp"

#include <algorithm>
#include <chrono>

#include "engine/core/error.hpp"
#include "engine/core/rank_clock.hpp"
#include "engine/topology/parameter_server/protocol.hpp"

namespace laconic::topology {

SynchronousServer::SynchronousServer(ParameterServerOptions options, int workers, std::size_t n)
    : options_(options), workers_(workers), sum_(n), update_(n) {}

ServerRound SynchronousServer::serve_round(compress::Compressor& compressor, comm::Communicator& comm,
                                           const ServerUpdate& update) {
  ServerRound round;
  ExchangeStats& stats = round.stats;
  const comm::ByteCounters before = comm.counters();
  std::fill(sum_.begin(), sum_.end(), 0.0f);
  int pushed = 0;
  double t = rank_seconds();
  double decode = 0;
  // Fan-in: one push from every worker, in rank order.
  for (int w = 0; w < workers_; ++w) {
    if (receive_push(comm, w, incoming_).done) {
      ++finished_;
      continue;
    }
    const double d = rank_seconds();
    if (options_.compress_push)
      compressor.decompress_add(incoming_, sum_);
    else
      add_dense(incoming_, sum_);
    decode += seconds_since(d);
    ++pushed;
  }
  if (pushed == 0 && finished_ == workers_) {
    round.done = true;
    return round;
  }
  LACONIC_ENFORCE(pushed == workers_, pushed, " of ", workers_,
                  " workers pushed in this round; the others had finished (workers out of step)");
  const double receive = seconds_since(t) - decode;

  t = rank_seconds();
  if (options_.compress_push)
    compressor.aggregate(sum_, workers_);
  else
    for (float& v : sum_) v /= static_cast<float>(workers_);
  update(sum_, update_);
  if (options_.compress_pull)
    compressor.compress(update_, payload_);
  else
    encode_dense(update_, payload_);
  stats.time_compress = seconds_since(t);
  stats.time_decompress = decode;
  stats.payload_bytes = payload_.size();
  stats.bytes_dense = static_cast<std::uint64_t>(workers_) * (PullHeader::kBytes + 4 * sum_.size());

  // Fan-out: the same payload to every worker, after a header with the round's traffic.
  const comm::ByteCounters received = comm.counters().since(before);
  const auto workers = static_cast<std::uint64_t>(workers_);
  const PullHeader header{payload_.size(), received.messages + 2 * workers,
                          received.link_bytes + workers * (PullHeader::kBytes + payload_.size())};
  t = rank_seconds();
  for (int w = 0; w < workers_; ++w) send_pull(comm, w, header, payload_);
  stats.time_communicate = receive + seconds_since(t);
  stats.traffic = comm.counters().since(before);
  stats.bytes_sent = stats.traffic.sent;
  stats.bytes_received = stats.traffic.received;
  stats.gathered = true;
  return round;
}

}  // namespace laconic::topology
