// The parameter server's protocol (engine/topology/parameter_server/), tested over an in-memory
// communicator: the headers' encoding, a synchronous round's fan-in, update and fan-out with
// one and two servers, the end of training, and the asynchronous server's staleness bound.
#include <catch2/catch.hpp>

#include <algorithm>
#include <mutex>

#include "engine/compress/builtin.hpp"
#include "engine/topology/parameter_server/asynchronous_server.hpp"
#include "engine/topology/parameter_server/protocol.hpp"
#include "engine/topology/parameter_server/synchronous_server.hpp"
#include "engine/topology/parameter_server/worker_side.hpp"
#include "memory_communicator.hpp"

using namespace laconic;
using namespace laconic::topology;

namespace {

ParameterServerOptions dense(Pull pull, std::int64_t servers = 1) {
  ParameterServerOptions o;
  o.servers = servers;
  o.pull = pull;
  o.compress_push = false;
  o.compress_pull = false;
  return o;
}

std::unique_ptr<compress::Compressor> none() {
  return compress::builtin_compressors().create({"compressor", "none", {}});
}

}  // namespace

TEST_CASE("push and pull headers survive their encoding, and a push says when a worker is done",
          "[topology][ps][protocol]") {
  const auto push = PushHeader{1234, false}.encode();
  CHECK(push.size() == 8);
  CHECK(PushHeader::decode(push, 0).payload_bytes == 1234);
  CHECK_FALSE(PushHeader::decode(push, 0).done);
  CHECK(PushHeader::decode(PushHeader{0, true}.encode(), 0).done);
  const auto huge = PushHeader{std::uint64_t{1} << 41, false}.encode();
  CHECK_THROWS_WITH(PushHeader::decode(huge, 3), Catch::Contains("worker 3 announced a push of 2199023255552 bytes"));
  const PullHeader pull{7, 11, 4096};
  const auto decoded = PullHeader::decode(pull.encode());
  CHECK(decoded.payload_bytes == 7);
  CHECK(decoded.round_messages == 11);
  CHECK(decoded.round_link_bytes == 4096);
  std::vector<std::uint8_t> payload;
  encode_dense(std::vector<float>{1.5f, -2.0f}, payload);
  std::vector<float> sum{1.0f, 1.0f};
  add_dense(payload, sum);
  CHECK(sum == std::vector<float>{2.5f, -1.0f});
  std::vector<float> three(3);
  CHECK_THROWS_WITH(add_dense(payload, three), Catch::Contains("expected a dense payload of 12 bytes, got 8"));
}

TEST_CASE("a synchronous round gives every worker what the server made of the mean, then ends when all are done",
          "[topology][ps][multirank]") {
  for (const Pull pull : {Pull::Gradients, Pull::Weights}) {
    for (const int servers : {1, 2}) {
      INFO((pull == Pull::Weights ? "weights" : "gradients") << ", " << servers << " servers");
      constexpr int kWorkers = 2;
      constexpr std::size_t n = 6;
      std::vector<std::vector<float>> pulled(kWorkers);
      std::vector<int> rounds(static_cast<std::size_t>(servers));
      std::mutex mutex;
      testing::run_memory_ranks(kWorkers + servers, [&](comm::Communicator& comm) {
        if (comm.rank() >= kWorkers) {
          const int index = comm.rank() - kWorkers;
          const auto [begin, end] = server_shard(n, servers, index);
          SynchronousServer server(dense(pull, servers), kWorkers, end - begin);
          auto codec = none();
          // The server's "optimizer": what it sends back is twice the mean.
          const ServerUpdate twice = [](std::span<const float> mean, std::span<float> out) {
            for (std::size_t i = 0; i < mean.size(); ++i) out[i] = 2 * mean[i];
          };
          while (!server.serve_round(*codec, comm, twice).done) ++rounds[static_cast<std::size_t>(index)];
          return;
        }
        ParameterServerTopology topology(dense(pull, servers));
        if (servers > 1)
          topology.wire({.flat_compressor = [](std::size_t, std::uint64_t, int, bool) { return none(); }});
        auto codec = none();
        // Worker w's gradient: w + i.
        std::vector<float> gradient(n);
        for (std::size_t i = 0; i < n; ++i) gradient[i] = static_cast<float>(comm.rank()) + static_cast<float>(i);
        const ExchangeStats stats = topology.average(gradient, *codec, comm);
        CHECK(stats.bytes_sent == 8 * static_cast<std::uint64_t>(servers) + 4 * n);  // headers and the dense push
        CHECK(stats.bytes_received == 24 * static_cast<std::uint64_t>(servers) + 4 * n);
        topology.finish(comm);
        std::lock_guard<std::mutex> lock(mutex);
        pulled[static_cast<std::size_t>(comm.rank())] = gradient;
      });
      for (const int r : rounds) CHECK(r == 1);
      // mean of (0 + i) and (1 + i) is 0.5 + i; the server sends back twice that.
      for (const auto& p : pulled)
        for (std::size_t i = 0; i < n; ++i) CHECK(p[i] == Approx(2 * (0.5 + static_cast<double>(i))));
    }
  }
}

namespace {

// The asynchronous server's model: a counter of applied gradients, and weights that are the sum
// of everything applied.
class CountingModel : public ServerModel {
 public:
  explicit CountingModel(std::size_t n) : weights_(n, 0.0f) {}
  void apply(std::span<const float> gradient) override {
    for (std::size_t i = 0; i < weights_.size(); ++i) weights_[i] += gradient[i];
  }
  void read_weights(std::span<float> out) override { std::copy(weights_.begin(), weights_.end(), out.begin()); }
  void on_update(const AppliedUpdate& update) override { updates.push_back(update); }
  std::vector<AppliedUpdate> updates;
  std::vector<float> weights_;
};

}  // namespace

TEST_CASE("the asynchronous server applies every push and keeps each worker within the staleness bound",
          "[topology][ps][async][multirank]") {
  constexpr int kWorkers = 2;
  constexpr std::size_t n = 4;
  constexpr int kFastSteps = 5, kSlowSteps = 2;
  CountingModel model(n);
  std::vector<std::vector<float>> last_pull(kWorkers);
  std::mutex mutex;
  testing::run_memory_ranks(kWorkers + 1, [&](comm::Communicator& comm) {
    if (comm.rank() == kWorkers) {
      auto codec = none();
      AsynchronousServer(dense(Pull::Weights), 1, kWorkers, n).serve(comm, *codec, {}, model);
      return;
    }
    ParameterServerTopology topology(dense(Pull::Weights));
    topology.wire({.staleness_bound = 1});
    auto codec = none();
    const int steps = comm.rank() == 0 ? kFastSteps : kSlowSteps;
    std::vector<float> weights(n, 0.0f);
    for (int step = 0; step < steps; ++step) {
      if (comm.rank() == 1) std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the straggler
      std::vector<float> gradient(n, 1.0f);
      topology.average(gradient, *codec, comm);  // the change of the server's weights since the last pull
      for (std::size_t i = 0; i < n; ++i) weights[i] += gradient[i];
    }
    topology.finish(comm);
    std::lock_guard<std::mutex> lock(mutex);
    last_pull[static_cast<std::size_t>(comm.rank())] = weights;
  });
  REQUIRE(model.updates.size() == kFastSteps + kSlowSteps);  // every push applied once
  for (const auto& u : model.updates) CHECK(u.staleness <= 1);
  for (float w : model.weights_) CHECK(w == kFastSteps + kSlowSteps);
  // A worker's copy is the server's weights as of its last pull: the sum of the changes it pulled.
  for (const auto& copy : last_pull)
    for (float w : copy) CHECK(w <= kFastSteps + kSlowSteps);
  // The fast worker, at most one step ahead of the straggler while it runs, takes its last steps
  // after the straggler finished: its last pull holds every update.
  CHECK(last_pull[0][0] == kFastSteps + kSlowSteps);
  // The fast worker was held back: some of its updates were applied one step ahead.
  CHECK(
      std::any_of(model.updates.begin(), model.updates.end(), [](const AppliedUpdate& u) { return u.staleness == 1; }));
}
