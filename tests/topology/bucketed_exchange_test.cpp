// The overlapped exchange (allreduce { overlap = true }) over real Gloo ranks (threads): buckets
// cover every layer once in reverse order; bucket by bucket, an element-wise compressor gives
// bit for bit the result of the whole-gradient exchange; time is split at backward's end into
// what the step waited for and what was hidden; a straggler shows as waiting.
#include <algorithm>
#include <mutex>
#include <random>
#include <thread>

#include <catch2/catch.hpp>

#include "engine/comm/network.hpp"
#include "engine/compress/builtin.hpp"
#include "engine/topology/bucketed_exchange.hpp"
#include "engine/topology/exchange.hpp"
#include "rank_threads.hpp"

using namespace laconic;

namespace {

// Layer sizes of a small model: weights and biases, in forward order.
const std::vector<std::size_t> kLayers = {150, 6, 2400, 16, 48000, 120, 10080, 84, 840, 10};

std::size_t total(const std::vector<std::size_t>& layers) {
  std::size_t n = 0;
  for (std::size_t s : layers) n += s;
  return n;
}

std::vector<float> normal_gradient_of(int rank, std::size_t n) {
  std::mt19937 gen(static_cast<unsigned>(rank) * 7919u + 1u);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> g(n);
  for (float& v : g) v = normal(gen);
  return g;
}

std::unique_ptr<compress::Compressor> make(const std::string& name) {
  return compress::builtin_compressors().create({"compressor", name, {}});
}

topology::BucketedExchange::CompressorFactory factory(const std::string& name) {
  return [name](std::size_t, std::size_t, std::size_t) { return make(name); };
}

// Small caps, so that the layers above make several buckets.
const topology::Bucketing kSmallBuckets{16 * 1024, 64 * 1024};

}  // namespace

TEST_CASE("buckets hold every layer once, from the last layer back, closed at their caps", "[topology][overlap]") {
  const auto buckets = topology::plan_buckets(kLayers, kSmallBuckets);
  REQUIRE(buckets.size() >= 3);
  std::size_t expected_end = kLayers.size(), covered = 0;
  for (std::size_t b = 0; b < buckets.size(); ++b) {
    const auto& bucket = buckets[b];
    CHECK(bucket.end_layer == expected_end);  // contiguous, in reverse
    CHECK(bucket.first_layer < bucket.end_layer);
    std::size_t size = 0, offset = 0;
    for (std::size_t l = 0; l < bucket.first_layer; ++l) offset += kLayers[l];
    for (std::size_t l = bucket.first_layer; l < bucket.end_layer; ++l) size += kLayers[l];
    CHECK(bucket.offset == offset);
    CHECK(bucket.size == size);
    // Closed at the first layer that reached the cap: without that layer it was below it.
    const std::size_t cap = b == 0 ? kSmallBuckets.first_bucket_bytes : kSmallBuckets.bucket_bytes;
    if (bucket.first_layer > 0) {
      CHECK(size * sizeof(float) >= cap);
      CHECK((size - kLayers[bucket.first_layer]) * sizeof(float) < cap);
    }
    covered += size;
    expected_end = bucket.first_layer;
  }
  CHECK(expected_end == 0);
  CHECK(covered == total(kLayers));
  // PyTorch DDP's caps (1 MiB first, 25 MiB): this small model is one bucket.
  CHECK(topology::plan_buckets(kLayers, topology::Bucketing{}).size() == 1);
  // A cap of one byte: a bucket per layer.
  CHECK(topology::plan_buckets(kLayers, topology::Bucketing{1, 1}).size() == kLayers.size());
}

namespace {

struct Round {
  std::vector<float> result;
  topology::ExchangeStats stats;
};

// Both ranks exchange their gradient bucket by bucket: layers are reported ready from the last
// to the first, `spacing` apart, then backward "ends" `tail` later.
std::vector<Round> overlapped(const std::string& compressor, std::chrono::milliseconds spacing,
                              std::chrono::milliseconds tail, const comm::NetworkModel* network = nullptr) {
  std::vector<Round> rounds(2);
  testing::run_ranks(2, std::chrono::seconds(30), [&](comm::Communicator& comm) {
    auto g = normal_gradient_of(comm.rank(), total(kLayers));
    topology::BucketedExchange exchange(g, kLayers, kSmallBuckets, factory(compressor), comm,
                                        comm::AllreduceAlgorithm::Ring);
    exchange.begin();
    for (std::size_t l = kLayers.size(); l-- > 0;) {
      std::this_thread::sleep_for(spacing);
      exchange.layer_ready(l);
    }
    std::this_thread::sleep_for(tail);
    exchange.backward_done();
    auto& round = rounds[static_cast<std::size_t>(comm.rank())];
    round.stats = exchange.finish(network);
    round.result = g;
  });
  return rounds;
}

std::vector<std::vector<float>> whole(const std::string& compressor) {
  std::vector<std::vector<float>> results(2);
  testing::run_ranks(2, std::chrono::seconds(30), [&](comm::Communicator& comm) {
    auto g = normal_gradient_of(comm.rank(), total(kLayers));
    auto c = make(compressor);
    compress::Payload scratch;
    topology::exchange_compressed(g, *c, comm, false, scratch);
    results[static_cast<std::size_t>(comm.rank())] = g;
  });
  return results;
}

}  // namespace

TEST_CASE("bucket by bucket, an element-wise compressor averages exactly as over the whole gradient",
          "[topology][overlap][multirank]") {
  for (std::string compressor : {"none", "fp16"}) {
    INFO(compressor);
    const auto reference = whole(compressor);
    const auto rounds = overlapped(compressor, std::chrono::milliseconds(1), std::chrono::milliseconds(0));
    CHECK(reference[0] == reference[1]);
    CHECK(rounds[0].result == reference[0]);  // bit for bit
    CHECK(rounds[1].result == reference[1]);
    CHECK(rounds[0].stats.overlapped);
    CHECK(rounds[0].stats.measured_wait);
    // Every bucket's payload and ring traffic, summed.
    std::size_t dense = 0;
    for (const auto& b : topology::plan_buckets(kLayers, kSmallBuckets))
      dense += comm::ring_allreduce_bytes_sent(b.size, 2, 0);
    CHECK(rounds[0].stats.bytes_dense == dense);
    if (compressor == "none") CHECK(rounds[0].stats.bytes_sent == dense);
    // fp16 is summed in the ring in half precision, bucket by bucket: half of dense's bytes.
    if (compressor == "fp16") CHECK_FALSE(rounds[0].stats.gathered);
    if (compressor == "fp16") CHECK(2 * rounds[0].stats.bytes_sent == dense);
  }
}

TEST_CASE("the exchange's time is split at backward's end: hidden behind it, or waited for",
          "[topology][overlap][multirank]") {
  SECTION("backward ends long after the last layer: everything was hidden") {
    const auto rounds = overlapped("none", std::chrono::milliseconds(0), std::chrono::milliseconds(300));
    for (const auto& r : rounds) {
      CHECK(r.stats.time_overlapped > 0);
      CHECK(r.stats.time_communicate == 0);
      CHECK(r.stats.time_wait == 0);
      CHECK(r.stats.time_compress == 0);
      CHECK(r.stats.time_decompress == 0);
    }
  }
  SECTION("no layer is reported before backward ends: nothing was hidden") {
    std::vector<topology::ExchangeStats> stats(2);
    testing::run_ranks(2, std::chrono::seconds(30), [&](comm::Communicator& comm) {
      auto g = normal_gradient_of(comm.rank(), total(kLayers));
      topology::BucketedExchange exchange(g, kLayers, kSmallBuckets, factory("none"), comm,
                                          comm::AllreduceAlgorithm::Ring);
      for (int round = 0; round < 3; ++round) {  // the thread serves round after round
        exchange.begin();
        exchange.backward_done();
        stats[static_cast<std::size_t>(comm.rank())] = exchange.finish();
      }
    });
    for (const auto& s : stats) {
      CHECK(s.time_overlapped == 0);
      CHECK(s.time_communicate > 0);
    }
  }
}

TEST_CASE("projected onto a slow link, the buckets' traffic after backward's end is what the step waits for",
          "[topology][overlap][multirank]") {
  comm::LinkOptions options;
  options.bits_per_second = 10e6;  // 10 Mbit/s: the ~250 kB take about 0.2 s
  options.latency_seconds = 1e-3;
  comm::Link link(options);
  const auto rounds = overlapped("none", std::chrono::milliseconds(0), std::chrono::milliseconds(0), &link);
  const auto& s = rounds[0].stats;
  REQUIRE(s.projected_time_communicate);
  // Backward ended as soon as the last layer came: the link was busy with buckets from then on,
  // so nearly all of their projected time lies after it (the first may have begun before).
  const double all = link.project(s.traffic);
  CHECK(*s.projected_time_communicate <= all + 1e-9);
  CHECK(*s.projected_time_communicate > 0.8 * all);
  // When backward goes on for a second after the layers came, the slow link is done before.
  const auto hidden = overlapped("none", std::chrono::milliseconds(0), std::chrono::milliseconds(1000), &link);
  CHECK(*hidden[0].stats.projected_time_communicate == 0);
}

TEST_CASE("with the exchange overlapped, a straggler's delay shows as the others' waiting",
          "[topology][overlap][wait][multirank]") {
  // Rank 0's medians over calm rounds and rounds where rank 1's backward is 20 ms slower,
  // interleaved: whatever else the machine does disturbs both kinds alike.
  std::vector<double> calm_waits, calm_communicates, waits, communicates;
  testing::run_ranks(2, std::chrono::seconds(30), [&](comm::Communicator& comm) {
    auto g = normal_gradient_of(comm.rank(), total(kLayers));
    topology::BucketedExchange exchange(g, kLayers, kSmallBuckets, factory("none"), comm,
                                        comm::AllreduceAlgorithm::Ring);
    for (int round = 0; round < 30; ++round) {
      const bool straggled = round % 2 == 1;
      exchange.begin();
      if (comm.rank() == 1 && straggled) std::this_thread::sleep_for(std::chrono::milliseconds(20));
      for (std::size_t l = kLayers.size(); l-- > 0;) exchange.layer_ready(l);
      exchange.backward_done();
      const auto stats = exchange.finish();
      if (comm.rank() == 0) {
        (straggled ? waits : calm_waits).push_back(stats.time_wait);
        (straggled ? communicates : calm_communicates).push_back(stats.time_communicate);
      }
    }
  });
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  const double calm_wait = median(calm_waits), calm_communicate = median(calm_communicates);
  const double wait = median(waits), communicate = median(communicates);
  INFO("medians, calm: wait " << calm_wait << " s, communicate " << calm_communicate
                              << " s; with a 20 ms straggler: wait " << wait << " s, communicate " << communicate);
  CHECK(wait - calm_wait > 0.015);
  CHECK(wait - calm_wait < 0.040);
  // Not the straggler's 20 ms: at most half of it, which a machine busy with other tests can add.
  CHECK(communicate < calm_communicate + 0.010);
}
