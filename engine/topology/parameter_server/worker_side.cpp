#include "engine/topology/parameter_server/worker_side.hpp"

#include <algorithm>
#include <chrono>

#include "engine/compress/random.hpp"
#include "engine/core/error.hpp"
#include "engine/core/rank_clock.hpp"
#include "engine/topology/parameter_server/protocol.hpp"

namespace laconic::topology {

void ParameterServerTopology::check(const compress::Compressor& compressor) const {
  if (!options_.compress_push && !options_.compress_pull) return;  // it is not used
  if (compressor.exchanges_itself())
    throw ConfigError(str_cat(compressor.name(), " runs its own allreduces; use topology = allreduce()"));
  if (!compressor.self_decoding())
    throw ConfigError(str_cat("parameter_server cannot decode ", compressor.name(),
                              "'s payloads: decoding them needs the sender's state of the step "
                              "(shared-seed indices); use randomk { shared_seed = false } or "
                              "topk"));
}

std::unique_ptr<compress::Compressor> ParameterServerTopology::make_shard_compressor(std::size_t size, int shard,
                                                                                     int rank) const {
  if (options_.servers == 1) return nullptr;
  LACONIC_ENFORCE(static_cast<bool>(factory_), "parameter_server with ", options_.servers,
                  " servers needs a compressor factory (wire())");
  return factory_(size, compress::streams::kServerShard + static_cast<std::uint64_t>(shard), rank, true);
}

compress::Compressor& ParameterServerTopology::shard_compressor(int shard, compress::Compressor& given,
                                                                std::size_t size, int rank) {
  if (options_.servers == 1) return given;  // the run's compressor, shapes and all
  if (shard_compressors_.empty()) {
    for (int s = 0; s < options_.servers; ++s) {
      const auto [begin, end] = server_shard(size, static_cast<int>(options_.servers), s);
      shard_compressors_.push_back(make_shard_compressor(end - begin, s, rank));
      if (!loaded_states_.empty()) {  // resuming: the state the checkpoint saved
        StateReader in(loaded_states_[static_cast<std::size_t>(s)]);
        shard_compressors_.back()->load_state(in);
        LACONIC_ENFORCE(in.done(), "shard compressor ", s, "'s saved state has bytes left over");
      }
      shard_compressors_.back()->advance(point_);
    }
    loaded_states_.clear();
  }
  return *shard_compressors_[static_cast<std::size_t>(shard)];
}

void ParameterServerTopology::save_state(StateWriter& out) const {
  out.u64(shard_compressors_.size());  // 0 before the first step, and with a single server
  for (const auto& c : shard_compressors_) {
    std::vector<std::uint8_t> bytes;
    StateWriter state(bytes);
    c->save_state(state);
    out.array(bytes);
  }
}

void ParameterServerTopology::load_state(StateReader& in) {
  const std::uint64_t count = in.u64();
  LACONIC_ENFORCE(count == 0 || count == static_cast<std::uint64_t>(options_.servers), "checkpoint holds ", count,
                  " shard compressors for ", options_.servers, " servers");
  loaded_states_.assign(count, {});
  for (auto& bytes : loaded_states_) in.array(bytes);
}

void ParameterServerTopology::send_header(comm::Communicator& comm, int server,
                                          std::span<const std::uint8_t> header) const {
  if (staleness_)
    comm.send_to_any_receiver(server, header);
  else
    comm.send_recv(server, header, server, {});
}

ExchangeStats ParameterServerTopology::average(std::span<float> gradient, compress::Compressor& compressor,
                                               comm::Communicator& comm) {
  ExchangeStats stats;
  const int servers = static_cast<int>(options_.servers);
  const int first_server = comm.size() - servers;
  LACONIC_ENFORCE(comm.rank() < first_server, "rank ", comm.rank(), " is a server, not a worker");
  const comm::ByteCounters before = comm.counters();
  stats.bytes_dense = PushHeader::kBytes * static_cast<std::uint64_t>(servers) + gradient.size_bytes();
  stats.gathered = true;
  stats.decoded_payloads = options_.compress_pull ? 1 : 0;  // the shards together: one vector
  payloads_.resize(static_cast<std::size_t>(servers));

  // Push: shard s of the gradient to server s.
  for (int s = 0; s < servers; ++s) {
    const auto [begin, end] = server_shard(gradient.size(), servers, s);
    const auto shard = gradient.subspan(begin, end - begin);
    compress::Payload& payload = payloads_[static_cast<std::size_t>(s)];
    double t = rank_seconds();
    if (options_.compress_push)
      shard_compressor(s, compressor, gradient.size(), comm.rank()).compress(shard, payload);
    else
      encode_dense(shard, payload);
    stats.time_compress += seconds_since(t);
    stats.payload_bytes += payload.size();
    t = rank_seconds();
    const int server = first_server + s;
    send_header(comm, server, PushHeader{payload.size(), false}.encode());
    comm.send_recv(server, payload, server, {});
    stats.time_communicate += seconds_since(t);
  }

  // Pull: each server's part back, decoded into its shard.
  PullHeader busiest;
  for (int s = 0; s < servers; ++s) {
    const auto [begin, end] = server_shard(gradient.size(), servers, s);
    const auto shard = gradient.subspan(begin, end - begin);
    const int server = first_server + s;
    double t = rank_seconds();
    std::array<std::uint8_t, PullHeader::kBytes> bytes{};
    comm.send_recv(server, {}, server, bytes);
    const PullHeader header = PullHeader::decode(bytes);
    incoming_.resize(header.payload_bytes);
    comm.send_recv(server, {}, server, incoming_);
    stats.time_communicate += seconds_since(t);
    t = rank_seconds();
    std::fill(shard.begin(), shard.end(), 0.0f);
    if (options_.compress_pull)
      shard_compressor(s, compressor, gradient.size(), comm.rank()).decompress_add(incoming_, shard);
    else
      add_dense(incoming_, shard);
    stats.time_decompress += seconds_since(t);
    // The servers work side by side: a worker waits for the busiest one.
    if (header.round_link_bytes > busiest.round_link_bytes) busiest = header;
  }

  const comm::ByteCounters mine = comm.counters().since(before);
  stats.bytes_sent = mine.sent;
  stats.bytes_received = mine.received;
  // What the network model projects: the busiest server's whole round, which this worker waits
  // for (asynchronously, a worker waits only for its own exchanges).
  stats.traffic = mine;
  if (!staleness_) {
    stats.traffic.messages = busiest.round_messages;
    stats.traffic.link_bytes = busiest.round_link_bytes;
  }
  return stats;
}

std::unique_ptr<compress::Compressor> ParameterServerTopology::make_pull_compressor(std::size_t size, int shard,
                                                                                    int worker) const {
  LACONIC_ENFORCE(static_cast<bool>(factory_), "compressed asynchronous pulls need a compressor factory (wire())");
  return factory_(size, compress::streams::kServerPull + static_cast<std::uint64_t>(shard), worker, false);
}

void ParameterServerTopology::set_step(const StepPoint& point) {
  point_ = point;
  for (auto& c : shard_compressors_) c->advance(point);
}

void ParameterServerTopology::finish(comm::Communicator& comm) {
  const auto done = PushHeader{0, true}.encode();
  for (int s = 0; s < options_.servers; ++s)
    send_header(comm, comm.size() - static_cast<int>(options_.servers) + s, done);
}

void ParameterServerTopology::wire(const TopologyWiring& wiring) {
  factory_ = wiring.flat_compressor;
  staleness_ = wiring.staleness_bound;
  if (!staleness_) return;
  LACONIC_ENFORCE(traits().serves_asynchronously, "an asynchronous schedule needs parameter_server { pull = ",
                  "\"weights\" } (the catalog refuses others before building)");
  LACONIC_ENFORCE(*staleness_ >= 0, "staleness bound ", *staleness_, " < 0");
}

}  // namespace laconic::topology
