#pragma once
// The names of the metrics workers and servers record: the one place each is spelled, with its
// unit and who records it (docs/schema.md, "Metric keys", lists the same; a test checks that
// the two agree). Storage, reports and the CLI read them by these names.
#include <string_view>
#include <vector>

#include "engine/core/goal.hpp"

namespace laconic::keys {

// Every step, every worker.
inline constexpr const char* kTrainLoss = "train_loss";
inline constexpr const char* kTimeForward = "time_forward";
inline constexpr const char* kTimeBackward = "time_backward";
inline constexpr const char* kTimeCompress = "time_compress";
inline constexpr const char* kTimeDecompress = "time_decompress";
inline constexpr const char* kTimeWait = "time_wait";
inline constexpr const char* kTimeCommunicate = "time_communicate";
inline constexpr const char* kTimeOverlapped = "time_overlapped";
inline constexpr const char* kTimeOverlapBudget = "time_overlap_budget";
inline constexpr const char* kTimeOptimizer = "time_optimizer";
inline constexpr const char* kLr = "lr";
inline constexpr const char* kTimeStep = "time_step";
inline constexpr const char* kBytesSent = "bytes_sent";
inline constexpr const char* kBytesReceived = "bytes_received";
inline constexpr const char* kBytesDense = "bytes_dense";
inline constexpr const char* kPayloadBytes = "payload_bytes";
inline constexpr const char* kMessages = "messages";
inline constexpr const char* kLinkBytes = "link_bytes";
inline constexpr const char* kBetweenMessages = "between_messages";
inline constexpr const char* kBetweenLinkBytes = "between_link_bytes";
inline constexpr const char* kBetweenSharedBytes = "between_shared_bytes";
inline constexpr const char* kProjectedTimeCommunicate = "projected_time_communicate";
inline constexpr const char* kTimeDelay = "time_delay";
inline constexpr const char* kProjectedTimeStep = "projected_time_step";
// Workers that leave and join (churn), by worker 0 at a step where those present change: their
// count, each rank's change (+1 joined, -1 left; the row's worker is that rank), the bytes it
// sent the joiners (their weights and optimizer state) and the seconds that hand-over took.
inline constexpr const char* kMembers = "members";
inline constexpr const char* kMemberChange = "member_change";
inline constexpr const char* kJoinBytes = "join_bytes";
inline constexpr const char* kJoinSeconds = "join_seconds";
// An elastic run (elastic = true), by worker 0 where a generation begins after a failure: the
// seconds from its failed step's start to the failure it saw, and from then until the next
// generation was connected (the others' reports awaited, the new connections made).
inline constexpr const char* kDetectSeconds = "detect_seconds";
inline constexpr const char* kRegroupSeconds = "regroup_seconds";
// With churn, per worker present and step: the examples its step trained on (churn_batch).
inline constexpr const char* kExamples = "examples";
// A parameter server under stale_sync and async, per applied update.
inline constexpr const char* kStaleness = "staleness";
inline constexpr const char* kUpdateLag = "update_lag";
// Once per run.
inline constexpr const char* kModelParameters = "model_parameters";
inline constexpr const char* kDecodedPayloads = "decoded_payloads";
// Per epoch (and every eval_every steps for the test_* keys).
inline constexpr const char* kTestAccuracy = "test_accuracy";
inline constexpr const char* kTestLoss = "test_loss";
inline constexpr const char* kTestPerplexity = "test_perplexity";
inline constexpr const char* kTestBitsPerByte = "test_bits_per_byte";
inline constexpr const char* kEpochTrainLoss = "epoch_train_loss";
inline constexpr const char* kEpochTime = "epoch_time";
inline constexpr const char* kStoppedEarly = "stopped_early";
inline constexpr const char* kConsensusDistance = "consensus_distance";

/// One key as docs/schema.md describes it.
struct KeyInfo {
  const char* name;
  const char* unit;  ///< as the schema's tables write it: "seconds", "bytes", ...
};

/// Every key above, in the order of docs/schema.md's tables.
const std::vector<KeyInfo>& all_keys();

/// True for keys that count bytes (bytes_sent, bytes_received, bytes_dense, payload_bytes,
/// link_bytes): summed over steps and shown as sizes.
bool is_byte_key(std::string_view key);

/// Which way `key` is better, decided here only: Min for losses, perplexity, bits per byte, times, bytes,
/// staleness, lag and distances (any key that names one), Max for the rest (accuracy). Early
/// stopping's goal = "auto", `laconic best` without --goal and the reports' test metric read it.
Goal goal_of(std::string_view key);

}  // namespace laconic::keys
