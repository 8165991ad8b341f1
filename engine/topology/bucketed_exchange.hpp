#pragma once
// The exchange overlapped with backward (allreduce { overlap = true }), as PyTorch DDP runs it:
// the gradient is cut into buckets of whole layers in reverse order; backward reports each
// layer once its gradient is complete, and a communication thread exchanges every bucket as
// soon as all its layers are in, while backward goes on with the earlier layers. Buckets go
// out strictly in order, so every worker runs the same collectives in the same sequence.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "engine/comm/communicator.hpp"
#include "engine/comm/network.hpp"
#include "engine/compress/compressor.hpp"
#include "engine/compress/compressor_group.hpp"
#include "engine/topology/topology.hpp"

namespace laconic::topology {

/// Layers [first_layer, end_layer) of the flat gradient: elements [offset, offset + size).
struct GradientBucket {
  std::size_t first_layer = 0, end_layer = 0;
  std::size_t offset = 0, size = 0;
};

/// The buckets in the order they are exchanged: from the last layer backwards, each closed once
/// it holds at least its cap in fp32 bytes (the first bucket's cap is caps.first_bucket_bytes);
/// a layer larger than the cap is a bucket of its own. Every layer is in exactly one bucket.
std::vector<GradientBucket> plan_buckets(const std::vector<std::size_t>& layer_sizes, const Bucketing& caps);

/// What happened to one bucket in the last round, in seconds from the round's begin().
struct BucketTimeline {
  double ready = 0;     ///< its last layer was reported
  double start = 0;     ///< the communication thread took it up
  double end = 0;       ///< its average was in place
  ExchangeStats stats;  ///< its exchange, as exchange_compressed() measured it
};

class BucketedExchange {
 public:
  /// A compressor of the run's kind for the layers [first_layer, end_layer) of bucket `bucket`
  /// (seeded by the caller).
  using CompressorFactory = std::function<std::unique_ptr<compress::Compressor>(
      std::size_t first_layer, std::size_t end_layer, std::size_t bucket)>;

  /// `gradient` is the flat gradient backward writes into; it must stay where it is.
  BucketedExchange(std::span<float> gradient, const std::vector<std::size_t>& layer_sizes, const Bucketing& caps,
                   const CompressorFactory& make, comm::Communicator& comm, comm::AllreduceAlgorithm algorithm);
  /// Stops the communication thread (after the collective it is in, if any, ends or times out).
  ~BucketedExchange();
  BucketedExchange(const BucketedExchange&) = delete;
  BucketedExchange& operator=(const BucketedExchange&) = delete;

  /// Before backward: every bucket waits for all its layers again.
  void begin();
  /// Layer `layer`'s gradient is complete. Called from backward (any thread), once per layer.
  void layer_ready(std::size_t layer);
  /// Backward has returned: layers it gave no gradient count as ready (their zeros travel).
  void backward_done();
  /// Waits until every bucket is averaged in place and returns the round's stats: the parts of
  /// compression, waiting, collectives and decoding that ran after backward_done() in their
  /// usual fields, the rest in time_overlapped. With `network`, projected_time_communicate is
  /// the communication after backward when each bucket's traffic is replayed on that link from
  /// the moment it was ready to go. Rethrows what the communication thread threw.
  ExchangeStats finish(const comm::NetworkModel* network = nullptr);

  const std::vector<GradientBucket>& buckets() const { return buckets_; }
  /// The per-bucket compressors, in bucket order, as one: what the worker loop tells the run's
  /// compressor (epoch, step, checkpoints) it tells them.
  compress::CompressorGroup& compressors() { return compressors_; }
  /// The last round, bucket by bucket (valid after finish()).
  const std::vector<BucketTimeline>& timeline() const { return timeline_; }

 private:
  using Clock = std::chrono::steady_clock;
  void serve();  // the communication thread
  double since_begin(Clock::time_point t) const;

  std::span<float> gradient_;
  std::vector<GradientBucket> buckets_;
  std::vector<std::size_t> bucket_of_layer_;
  compress::CompressorGroup compressors_;
  std::vector<compress::Payload> payloads_;
  comm::Communicator& comm_;
  comm::AllreduceAlgorithm algorithm_;

  std::mutex mutex_;
  std::condition_variable changed_;
  std::uint64_t round_ = 0, served_round_ = 0;  // begin() counts rounds up; serve() follows
  std::vector<std::size_t> pending_;            // layers each bucket still waits for
  std::size_t next_bucket_ = 0;                 // the one the thread takes up next
  bool stopping_ = false;
  std::exception_ptr error_;
  Clock::time_point begin_at_;
  double backward_end_ = 0;
  std::vector<BucketTimeline> timeline_;
  std::thread thread_;
};

}  // namespace laconic::topology
