#include "engine/topology/bucketed_exchange.hpp"

#include <algorithm>
#include <array>
#include <limits>

#include "engine/core/error.hpp"
#include "engine/topology/exchange.hpp"

namespace laconic::topology {

std::vector<GradientBucket> plan_buckets(const std::vector<std::size_t>& layer_sizes, const Bucketing& caps) {
  std::vector<std::size_t> offsets(layer_sizes.size());
  std::size_t total = 0;
  for (std::size_t l = 0; l < layer_sizes.size(); ++l) {
    offsets[l] = total;
    total += layer_sizes[l];
  }
  std::vector<GradientBucket> buckets;
  std::size_t end = layer_sizes.size();  // the open bucket holds layers [l, end)
  std::size_t bytes = 0;
  for (std::size_t l = layer_sizes.size(); l-- > 0;) {
    bytes += layer_sizes[l] * sizeof(float);
    const std::size_t cap = buckets.empty() ? caps.first_bucket_bytes : caps.bucket_bytes;
    if (bytes >= cap || l == 0) {
      const std::size_t stop = end == layer_sizes.size() ? total : offsets[end];
      buckets.push_back({l, end, offsets[l], stop - offsets[l]});
      end = l;
      bytes = 0;
    }
  }
  return buckets;
}

namespace {

compress::CompressorGroup make_compressors(const std::vector<GradientBucket>& buckets,
                                          const BucketedExchange::CompressorFactory& make) {
  std::vector<std::unique_ptr<compress::Compressor>> compressors;
  for (std::size_t b = 0; b < buckets.size(); ++b)
    compressors.push_back(make(buckets[b].first_layer, buckets[b].end_layer, b));
  return compress::CompressorGroup(std::move(compressors));
}

}  // namespace

BucketedExchange::BucketedExchange(std::span<float> gradient, const std::vector<std::size_t>& layer_sizes,
                                   const Bucketing& caps, const CompressorFactory& make, comm::Communicator& comm,
                                   comm::AllreduceAlgorithm algorithm)
    : gradient_(gradient),
      buckets_(plan_buckets(layer_sizes, caps)),
      bucket_of_layer_(layer_sizes.size()),
      compressors_(make_compressors(buckets_, make)),
      comm_(comm),
      algorithm_(algorithm) {
  std::size_t total = 0;
  for (std::size_t size : layer_sizes) total += size;
  LACONIC_ENFORCE(total == gradient.size(), "layers of ", total, " elements for a gradient of ", gradient.size());
  for (std::size_t b = 0; b < buckets_.size(); ++b)
    for (std::size_t l = buckets_[b].first_layer; l < buckets_[b].end_layer; ++l) bucket_of_layer_[l] = b;
  payloads_.resize(buckets_.size());
  pending_.assign(buckets_.size(), 0);
  timeline_.resize(buckets_.size());
  thread_ = std::thread([this] { serve(); });
}

BucketedExchange::~BucketedExchange() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

double BucketedExchange::since_begin(Clock::time_point t) const {
  return std::chrono::duration<double>(t - begin_at_).count();
}

void BucketedExchange::begin() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    LACONIC_ENFORCE(served_round_ == round_, "a bucketed exchange began before the last ended");
    for (std::size_t b = 0; b < buckets_.size(); ++b) {
      pending_[b] = buckets_[b].end_layer - buckets_[b].first_layer;
      timeline_[b] = {};
    }
    next_bucket_ = 0;
    backward_end_ = std::numeric_limits<double>::infinity();
    begin_at_ = Clock::now();
    ++round_;
  }
  changed_.notify_all();
}

void BucketedExchange::layer_ready(std::size_t layer) {
  const auto now = Clock::now();
  std::lock_guard<std::mutex> lock(mutex_);
  if (round_ == served_round_ || layer >= bucket_of_layer_.size()) return;  // not in a round
  const std::size_t b = bucket_of_layer_[layer];
  if (pending_[b] == 0 || --pending_[b] > 0) return;
  timeline_[b].ready = since_begin(now);
  if (b == next_bucket_) changed_.notify_all();
}

void BucketedExchange::backward_done() {
  const auto now = Clock::now();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (std::size_t b = 0; b < buckets_.size(); ++b)
      if (pending_[b] > 0) {
        pending_[b] = 0;
        timeline_[b].ready = since_begin(now);
      }
    backward_end_ = since_begin(now);
  }
  changed_.notify_all();
}

void BucketedExchange::serve() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stopping_ || round_ > served_round_; });
    if (stopping_) return;
    for (next_bucket_ = 0; next_bucket_ < buckets_.size(); ++next_bucket_) {
      const std::size_t b = next_bucket_;
      changed_.wait(lock, [&] { return stopping_ || pending_[b] == 0; });
      if (stopping_) return;
      const GradientBucket& bucket = buckets_[b];
      lock.unlock();
      const auto start = Clock::now();
      ExchangeStats stats;
      std::exception_ptr error;
      try {
        // Only the first bucket waits for the slowest peer: after it, all are there.
        stats = exchange_compressed(gradient_.subspan(bucket.offset, bucket.size), compressors_[b], comm_, false,
                                    payloads_[b], algorithm_, b == 0);
      } catch (...) {
        error = std::current_exception();
      }
      const auto end = Clock::now();
      lock.lock();
      if (error) {
        error_ = error;
        break;
      }
      timeline_[b].start = since_begin(start);
      timeline_[b].end = since_begin(end);
      timeline_[b].stats = stats;
    }
    served_round_ = round_;
    changed_.notify_all();
  }
}

namespace {

/// The part of [start, start + length) that lies after `after`.
double part_after(double start, double length, double after) {
  return std::max(0.0, start + length - std::max(start, after));
}

}  // namespace

ExchangeStats BucketedExchange::finish(const comm::NetworkModel* network) {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return served_round_ == round_; });
  if (error_) std::rethrow_exception(error_);
  const double backward_end = backward_end_;
  ExchangeStats total;
  total.overlapped = true;
  double channel = -std::numeric_limits<double>::infinity(), projected = 0;
  for (std::size_t b = 0; b < buckets_.size(); ++b) {
    const BucketTimeline& t = timeline_[b];
    const ExchangeStats& s = t.stats;
    // The bucket's pieces in the order exchange_compressed() runs them (a compressor that
    // exchanges itself waits first and interleaves its codec with its collectives: there the
    // split between compression and communication after backward is approximate).
    const bool itself = compressors_[b].exchanges_itself();
    using Piece = std::pair<double, double*>;
    const Piece compress{s.time_compress, &total.time_compress}, wait{s.time_wait, &total.time_wait};
    const std::array<Piece, 4> pieces{itself ? wait : compress, itself ? compress : wait,
                                      Piece{s.time_communicate, &total.time_communicate},
                                      Piece{s.time_decompress, &total.time_decompress}};
    double at = t.start;
    for (auto [seconds, field] : pieces) {
      *field += part_after(at, seconds, backward_end);
      at += seconds;
    }
    total.time_overlapped += std::max(0.0, std::min(t.end, backward_end) - t.start);
    total.measured_wait = total.measured_wait || s.measured_wait;
    total.gathered = total.gathered || s.gathered;
    total.decoded_payloads = std::max(total.decoded_payloads, s.decoded_payloads);  // each bucket's share alike
    total.bytes_sent += s.bytes_sent;
    total.bytes_received += s.bytes_received;
    total.bytes_dense += s.bytes_dense;
    total.payload_bytes += s.payload_bytes;
    total.traffic += s.traffic;
    if (network) {
      // On the modelled link the bucket's messages leave once it is compressed and every peer
      // is there, and not before the link has carried the buckets before it.
      const double go = t.start + s.time_wait + (itself ? 0.0 : s.time_compress);
      const double from = std::max(go, channel);
      const double length = network->project(s.traffic);
      channel = from + length;
      projected += part_after(from, length, backward_end);
    }
  }
  if (network) total.projected_time_communicate = projected;
  return total;
}

}  // namespace laconic::topology
