#pragma once
// The line protocol on which a worker process tells the controller what it measured, how far it
// got and why it failed. One message per line, tab-separated, so that whatever reached the
// controller before a crash is complete and can be stored.
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "engine/core/metrics.hpp"

namespace laconic {

/// Training progress, sent by rank 0 for the terminal's progress line.
struct ProgressMessage {
  std::int64_t epoch = 0;
  std::int64_t step = 0;  ///< step within the epoch, counted from 1
  std::int64_t steps_per_epoch = 0;
  double loss = 0;  ///< training loss of the last step
  double steps_per_second = 0;
};

/// The reason a worker gives up (sent just before it exits non-zero).
struct FailureMessage {
  std::string text;
};

/// A worker's checkpoint to resume before global step `step` is durable on disk; every metric
/// of the steps before it was sent earlier on the same pipe.
struct CheckpointMessage {
  std::int64_t step = 0;
};

/// A fact about how the worker runs, for run_facts: "torch_threads" = "1", "blas_library" =
/// its path. Sent once, after the threads are set.
struct FactMessage {
  std::string key;
  std::string value;
};

/// A sign of life, sent every second by a thread of the worker process whatever the main thread
/// is doing: its phase and how long its main thread has gone without progress.
struct HeartbeatMessage {
  std::string phase;  ///< "training", "evaluating", ...
  double quiet = 0;   ///< seconds since the main thread's last progress
};

using WorkerMessage =
    std::variant<MetricRecord, ProgressMessage, FailureMessage, CheckpointMessage, FactMessage, HeartbeatMessage>;

/// One line, newline included.
std::string encode_message(const WorkerMessage& message);

/// Free text as one tab-separated field: backslash, tab and newline escaped ("a\tb" -> "a\\tb").
std::string escape_field(std::string_view text);
/// The inverse of escape_field().
std::string unescape_field(std::string_view text);

/// Parses one line (with or without its newline); nullopt for a malformed line.
std::optional<WorkerMessage> decode_message(std::string_view line);

/// Writes messages to a file descriptor (the worker's end of the controller's pipe). Buffered:
/// a flush happens at 16 KiB or when the oldest unsent line is 0.25 s old, so a worker that dies
/// loses at most a quarter second of measurements. Safe to use from several threads (the
/// heartbeat thread and the main thread): lines never interleave.
class MessageWriter : public MetricsSink {
 public:
  explicit MessageWriter(int fd) : fd_(fd) {}
  ~MessageWriter() override;
  void record(const MetricRecord& record) override { send(record); }
  void flush() override;
  void send(const WorkerMessage& message);

 private:
  void flush_locked();

  int fd_;
  std::mutex mutex_;
  std::string buffer_;
  std::chrono::steady_clock::time_point oldest_{};
};

}  // namespace laconic
