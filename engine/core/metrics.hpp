#pragma once
// How the engine reports what it measured. Storage implements MetricsSink; tests use MemorySink.
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace laconic {

/// One measurement. Its key is one of engine/core/metric_keys.hpp (docs/schema.md lists them).
struct MetricRecord {
  std::string key;
  std::int64_t step = 0;   ///< global step of the worker, counted from 0
  std::int64_t epoch = 0;  ///< epoch, counted from 0
  int worker = 0;          ///< rank of the worker that measured it
  double wall_time = 0;    ///< seconds since the run started (that worker's clock)
  double value = 0;        ///< NaN and infinities are legal values
};

class MetricsSink {
 public:
  virtual ~MetricsSink() = default;
  virtual void record(const MetricRecord& record) = 0;
  /// Makes everything recorded so far durable (or visible, for in-memory sinks).
  virtual void flush() {}
};

/// Keeps records in memory; thread-safe so multi-rank tests can share one.
class MemorySink : public MetricsSink {
 public:
  void record(const MetricRecord& record) override {
    std::lock_guard<std::mutex> lock(mutex_);
    records_.push_back(record);
  }
  std::vector<MetricRecord> records() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return records_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<MetricRecord> records_;
};

}  // namespace laconic
