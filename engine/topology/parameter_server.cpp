#include "engine/topology/parameter_server.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>

#include "engine/core/error.hpp"

namespace laconic::topology {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// The size word a finished worker pushes instead of a payload's size.
constexpr std::uint64_t kDone = std::numeric_limits<std::uint64_t>::max();

std::span<const std::uint8_t> bytes_of(const void* data, std::size_t size) {
  return {static_cast<const std::uint8_t*>(data), size};
}
std::span<std::uint8_t> mutable_bytes_of(void* data, std::size_t size) {
  return {static_cast<std::uint8_t*>(data), size};
}

void encode_dense(std::span<const float> values, compress::Payload& payload) {
  payload.resize(values.size_bytes());
  std::memcpy(payload.data(), values.data(), values.size_bytes());
}

void add_dense(std::span<const std::uint8_t> payload, std::span<float> dense) {
  LACONIC_ENFORCE(payload.size() == dense.size_bytes(), "expected a dense payload of ",
                  dense.size_bytes(), " bytes, got ", payload.size());
  for (std::size_t i = 0; i < dense.size(); ++i) {
    float v;
    std::memcpy(&v, payload.data() + 4 * i, 4);
    dense[i] += v;
  }
}

}  // namespace

std::vector<FieldSpec> ParameterServerOptions::fields() {
  return {
      {"servers", FieldType::Int, std::int64_t{1},
       "server processes, each holding one contiguous shard of the parameters, in [1, 64]"},
      {"push", FieldType::String, std::string("gradients"), "what workers push: \"gradients\""},
      {"pull", FieldType::String, std::string("weights"),
       "what workers pull: \"weights\" (the server steps the optimizer and sends the change of "
       "its weights) or \"gradients\" (the mean gradient; workers step their own optimizers)"},
      {"compress_push", FieldType::Bool, true,
       "workers push through the run's compressor (else dense fp32)"},
      {"compress_pull", FieldType::Bool, false,
       "the server encodes what it sends back with a compressor of the same kind, with its own "
       "state (else dense fp32)"},
  };
}

std::string ParameterServerOptions::why_not_update_exchange(const ComponentSpec& spec) {
  if (spec.text("pull") != "weights") return "";
  return "with pull = \"weights\" the server steps its own optimizer on the pushes: use pull = \"gradients\", "
         "and each worker applies the mean update it pulls";
}

ParameterServerOptions ParameterServerOptions::from(const ComponentSpec& spec) {
  ParameterServerOptions o;
  o.servers = spec.integer("servers");
  o.push = spec.text("push");
  o.pull = spec.text("pull");
  o.compress_push = spec.flag("compress_push");
  o.compress_pull = spec.flag("compress_pull");
  if (o.servers < 1 || o.servers > 64)
    throw ConfigError(str_cat("parameter_server.servers must be in [1, 64], got ", o.servers));
  if (o.push != "gradients")
    throw ConfigError(str_cat("parameter_server.push must be \"gradients\", got \"", o.push,
                              "\""));
  if (o.pull != "weights" && o.pull != "gradients")
    throw ConfigError(str_cat("parameter_server.pull must be \"weights\" or \"gradients\", got \"",
                              o.pull, "\""));
  return o;
}

void ParameterServerTopology::check(const compress::Compressor& compressor) const {
  if (!options_.compress_push && !options_.compress_pull) return;  // it is not used
  if (compressor.exchanges_itself())
    throw ConfigError(str_cat(compressor.name(), " runs its own allreduces; use topology = "
                              "allreduce()"));
  if (!compressor.self_decoding())
    throw ConfigError(str_cat("parameter_server cannot decode ", compressor.name(),
                              "'s payloads: decoding them needs the sender's state of the step "
                              "(shared-seed indices); use randomk { shared_seed = false } or "
                              "topk"));
}

std::pair<std::size_t, std::size_t> server_shard(std::size_t n, int servers, int server) {
  const auto s = static_cast<std::size_t>(servers), i = static_cast<std::size_t>(server);
  return {n * i / s, n * (i + 1) / s};
}

std::unique_ptr<compress::Compressor> ParameterServerTopology::make_shard_compressor(
    std::size_t size, int shard, int rank) const {
  if (options_.servers == 1) return nullptr;
  LACONIC_ENFORCE(static_cast<bool>(factory_), "parameter_server with ", options_.servers,
                  " servers needs a compressor factory (set by the engine)");
  return factory_(size, shard, rank);
}

compress::Compressor& ParameterServerTopology::shard_compressor(int shard,
                                                                compress::Compressor& given,
                                                                std::size_t size, int rank) {
  if (options_.servers == 1) return given;  // the run's compressor, shapes and all
  if (shard_compressors_.empty()) {
    for (int s = 0; s < options_.servers; ++s) {
      const auto [begin, end] = server_shard(size, static_cast<int>(options_.servers), s);
      shard_compressors_.push_back(make_shard_compressor(end - begin, s, rank));
      shard_compressors_.back()->set_epoch(point_.epoch);
      if (!loaded_states_.empty()) {  // resuming: the state the checkpoint saved
        StateReader in(loaded_states_[static_cast<std::size_t>(s)]);
        shard_compressors_.back()->load_state(in);
        LACONIC_ENFORCE(in.done(), "shard compressor ", s, "'s saved state has bytes left over");
      }
      shard_compressors_.back()->set_step(point_);
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

ExchangeStats ParameterServerTopology::average(std::span<float> gradient,
                                               compress::Compressor& compressor,
                                               comm::Communicator& comm) {
  ExchangeStats stats;
  const int servers = static_cast<int>(options_.servers);
  const int first_server = comm.size() - servers;
  LACONIC_ENFORCE(comm.rank() < first_server, "rank ", comm.rank(),
                  " is a server, not a worker");
  const comm::ByteCounters before = comm.counters();
  stats.bytes_dense = 8 * static_cast<std::uint64_t>(servers) + gradient.size_bytes();
  stats.gathered = true;
  payloads_.resize(static_cast<std::size_t>(servers));

  // Push: shard s of the gradient to server s.
  for (int s = 0; s < servers; ++s) {
    const auto [begin, end] = server_shard(gradient.size(), servers, s);
    const auto shard = gradient.subspan(begin, end - begin);
    compress::Payload& payload = payloads_[static_cast<std::size_t>(s)];
    auto t = Clock::now();
    if (options_.compress_push)
      shard_compressor(s, compressor, gradient.size(), comm.rank()).compress(shard, payload);
    else
      encode_dense(shard, payload);
    stats.time_compress += seconds_since(t);
    stats.payload_bytes += payload.size();
    t = Clock::now();
    const int server = first_server + s;
    const std::uint64_t size = payload.size();
    if (staleness_ >= 0)  // an asynchronous server takes pushes from whoever comes first
      comm.send_to_any_receiver(server, bytes_of(&size, sizeof size));
    else
      comm.send_recv(server, bytes_of(&size, sizeof size), server, {});
    comm.send_recv(server, payload, server, {});
    stats.time_communicate += seconds_since(t);
  }

  // Pull: each server's part back, decoded into its shard.
  std::uint64_t round_messages = 0, round_link_bytes = 0;
  for (int s = 0; s < servers; ++s) {
    const auto [begin, end] = server_shard(gradient.size(), servers, s);
    const auto shard = gradient.subspan(begin, end - begin);
    const int server = first_server + s;
    auto t = Clock::now();
    std::uint64_t header[3] = {0, 0, 0};
    comm.send_recv(server, {}, server, mutable_bytes_of(header, sizeof header));
    incoming_.resize(header[0]);
    comm.send_recv(server, {}, server, incoming_);
    stats.time_communicate += seconds_since(t);
    t = Clock::now();
    std::fill(shard.begin(), shard.end(), 0.0f);
    if (options_.compress_pull)
      shard_compressor(s, compressor, gradient.size(), comm.rank()).decompress_add(incoming_, shard);
    else
      add_dense(incoming_, shard);
    stats.time_decompress += seconds_since(t);
    // The servers work side by side: a worker waits for the busiest one.
    if (header[2] > round_link_bytes) {
      round_messages = header[1];
      round_link_bytes = header[2];
    }
  }

  const comm::ByteCounters mine = comm.counters().since(before);
  stats.bytes_sent = mine.sent;
  stats.bytes_received = mine.received;
  // What the network model projects: the busiest server's whole round, which this worker waits
  // for (asynchronously, a worker waits only for its own exchanges).
  stats.traffic = mine;
  if (staleness_ < 0) {
    stats.traffic.messages = round_messages;
    stats.traffic.link_bytes = round_link_bytes;
  }
  return stats;
}

std::unique_ptr<compress::Compressor> ParameterServerTopology::make_pull_compressor(
    std::size_t size, int shard, int worker) const {
  LACONIC_ENFORCE(static_cast<bool>(pull_factory_), "compressed asynchronous pulls need a pull ",
                  "compressor factory (set by the engine)");
  return pull_factory_(size, shard, worker);
}

void ParameterServerTopology::set_step(const StepPoint& point) {
  const bool new_epoch = point.epoch != point_.epoch;
  point_ = point;
  for (auto& c : shard_compressors_) {
    if (new_epoch) c->set_epoch(point.epoch);
    c->set_step(point);
  }
}

void ParameterServerTopology::finish(comm::Communicator& comm) {
  const std::uint64_t done = kDone;
  for (int s = 0; s < options_.servers; ++s) {
    const int server = comm.size() - static_cast<int>(options_.servers) + s;
    if (staleness_ >= 0)
      comm.send_to_any_receiver(server, bytes_of(&done, sizeof done));
    else
      comm.send_recv(server, bytes_of(&done, sizeof done), server, {});
  }
}

void ParameterServerTopology::set_staleness(std::int64_t staleness) {
  if (options_.pull != "weights")
    throw ConfigError("stale_sync and async need parameter_server { pull = \"weights\" }: "
                      "the server steps its optimizer with each push on its own");
  LACONIC_ENFORCE(staleness >= 0, "staleness bound ", staleness, " < 0");
  staleness_ = staleness;
}

void serve_asynchronously(const ParameterServerOptions& options, std::int64_t staleness,
                          int workers, std::size_t n, compress::Compressor& compressor,
                          std::span<compress::Compressor* const> pull, comm::Communicator& comm,
                          const std::function<void(std::span<const float>)>& apply,
                          const std::function<void(std::span<float>)>& weights,
                          const std::function<void(const AppliedUpdate&)>& on_update) {
  const auto w_count = static_cast<std::size_t>(workers);
  LACONIC_ENFORCE(!options.compress_pull || pull.size() == w_count, "compressed pulls need one ",
                  "pull compressor per worker: ", workers, " workers, ", pull.size(), " given");
  std::vector<int> ranks(w_count);
  for (int w = 0; w < workers; ++w) ranks[static_cast<std::size_t>(w)] = w;
  std::vector<std::int64_t> clock(w_count, 0), read_version(w_count, 0), read_staleness(w_count, 0);
  std::vector<bool> active(w_count, true), held(w_count, false);
  // Every worker starts from the initial weights: what each was last sent.
  std::vector<std::vector<float>> sent(w_count, std::vector<float>(n));
  std::vector<float> current(n), gradient(n), change(n), decoded(n);
  compress::Payload reply;
  weights(current);
  for (auto& s : sent) s = current;
  std::int64_t version = 0;
  std::vector<std::uint8_t> incoming;
  AppliedUpdate report;
  std::uint64_t replies = 0;  // sent by the last release()

  // Replies to every held worker that is now within the bound of the slowest active one.
  auto release = [&] {
    replies = 0;
    std::int64_t slowest = std::numeric_limits<std::int64_t>::max();
    for (std::size_t w = 0; w < w_count; ++w)
      if (active[w]) slowest = std::min(slowest, clock[w]);
    weights(current);
    for (std::size_t w = 0; w < w_count; ++w) {
      if (!held[w] || (active[w] && clock[w] - slowest > staleness)) continue;
      held[w] = false;
      read_version[w] = version;
      read_staleness[w] = active[w] && slowest != std::numeric_limits<std::int64_t>::max()
                              ? clock[w] - slowest : 0;
      for (std::size_t i = 0; i < n; ++i) change[i] = current[i] - sent[w][i];
      if (options.compress_pull) {
        pull[w]->compress(change, reply);
        std::fill(decoded.begin(), decoded.end(), 0.0f);
        pull[w]->decompress_add(reply, decoded);
        for (std::size_t i = 0; i < n; ++i) sent[w][i] += decoded[i];
      } else {
        encode_dense(change, reply);
        sent[w] = current;
      }
      const std::uint64_t header[3] = {reply.size(), 0, 0};
      const int rank = static_cast<int>(w);
      comm.send_recv(rank, bytes_of(header, sizeof header), rank, {});
      comm.send_recv(rank, reply, rank, {});
      ++replies;
    }
  };

  int finished = 0;
  while (finished < workers) {
    const comm::ByteCounters before = comm.counters();
    auto t = Clock::now();
    std::uint64_t size = 0;
    const auto w = static_cast<std::size_t>(
        comm.receive_from_any(ranks, mutable_bytes_of(&size, sizeof size)));
    if (size == kDone) {
      active[w] = false;
      ++finished;
      release();  // a finished worker no longer holds the others back
      continue;
    }
    LACONIC_ENFORCE(size <= (std::uint64_t{1} << 40), "worker ", w, " announced a push of ",
                    size, " bytes");
    incoming.resize(size);
    comm.send_recv(static_cast<int>(w), {}, static_cast<int>(w), incoming);
    report.stats.time_communicate = seconds_since(t);
    t = Clock::now();
    std::fill(gradient.begin(), gradient.end(), 0.0f);
    if (options.compress_push)
      compressor.decompress_add(incoming, gradient);
    else
      add_dense(incoming, gradient);
    report.stats.time_decompress = seconds_since(t);
    report.worker = static_cast<int>(w);
    report.staleness = read_staleness[w];
    report.lag = version - read_version[w];
    LACONIC_ENFORCE(report.staleness <= staleness, "worker ", w, " computed on weights read ",
                    report.staleness, " steps ahead of the slowest, above the bound ", staleness);
    t = Clock::now();
    apply(gradient);
    ++version;
    ++clock[w];
    held[w] = true;
    release();
    report.stats.time_compress = seconds_since(t);  // the optimizer step and the replies
    report.stats.traffic = comm.counters().since(before);
    report.stats.bytes_sent = report.stats.traffic.sent;
    report.stats.bytes_received = report.stats.traffic.received;
    report.stats.payload_bytes = size;
    report.stats.bytes_dense = replies * (kPullHeaderBytes + 4 * n);  // the replies are dense
    on_update(report);
  }
}

ParameterServer::ParameterServer(ParameterServerOptions options, int workers, std::size_t n)
    : options_(std::move(options)), workers_(workers), sum_(n), update_(n) {}

ServerRound ParameterServer::serve_round(compress::Compressor& compressor,
                                         comm::Communicator& comm, const ServerUpdate& update) {
  ServerRound round;
  ExchangeStats& stats = round.stats;
  const comm::ByteCounters before = comm.counters();
  std::fill(sum_.begin(), sum_.end(), 0.0f);
  int pushed = 0;
  auto t = Clock::now();
  double decode = 0;
  // Fan-in: one push from every worker, in rank order.
  for (int w = 0; w < workers_; ++w) {
    std::uint64_t size = 0;
    comm.send_recv(w, {}, w, mutable_bytes_of(&size, sizeof size));
    if (size == kDone) {
      ++finished_;
      continue;
    }
    LACONIC_ENFORCE(size <= (std::uint64_t{1} << 40), "worker ", w, " announced a push of ",
                    size, " bytes");
    incoming_.resize(size);
    comm.send_recv(w, {}, w, incoming_);
    const auto d = Clock::now();
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

  t = Clock::now();
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
  stats.bytes_dense = static_cast<std::uint64_t>(workers_) * (kPullHeaderBytes + 4 * sum_.size());

  // Fan-out: the same payload to every worker, after a header with the round's traffic.
  const comm::ByteCounters received = comm.counters().since(before);
  std::uint64_t header[3] = {payload_.size(),
                             received.messages + 2 * static_cast<std::uint64_t>(workers_),
                             received.link_bytes + static_cast<std::uint64_t>(workers_) *
                                                       (kPullHeaderBytes + payload_.size())};
  t = Clock::now();
  for (int w = 0; w < workers_; ++w) {
    comm.send_recv(w, bytes_of(header, sizeof header), w, {});
    comm.send_recv(w, payload_, w, {});
  }
  stats.time_communicate = receive + seconds_since(t);
  stats.traffic = comm.counters().since(before);
  stats.bytes_sent = stats.traffic.sent;
  stats.bytes_received = stats.traffic.received;
  stats.gathered = true;
  return round;
}

}  // namespace laconic::topology
