#include "engine/core/metric_keys.hpp"

namespace laconic::keys {

const std::vector<KeyInfo>& all_keys() {
  static const std::vector<KeyInfo> kKeys = {
      {kTrainLoss, "loss units"},
      {kTimeForward, "seconds"},
      {kTimeBackward, "seconds"},
      {kTimeCompress, "seconds"},
      {kTimeDecompress, "seconds"},
      {kTimeWait, "seconds"},
      {kTimeCommunicate, "seconds"},
      {kTimeOverlapped, "seconds"},
      {kTimeOverlapBudget, "seconds"},
      {kTimeOptimizer, "seconds"},
      {kLr, "learning rate"},
      {kTimeStep, "seconds"},
      {kBytesSent, "bytes"},
      {kBytesReceived, "bytes"},
      {kBytesDense, "bytes"},
      {kPayloadBytes, "bytes"},
      {kMessages, "count"},
      {kLinkBytes, "bytes"},
      {kBetweenMessages, "count"},
      {kBetweenLinkBytes, "bytes"},
      {kBetweenSharedBytes, "bytes"},
      {kProjectedTimeCommunicate, "seconds"},
      {kTimeDelay, "seconds"},
      {kProjectedTimeStep, "seconds"},
      {kMembers, "workers"},
      {kMemberChange, "+1 joined, -1 left"},
      {kJoinBytes, "bytes"},
      {kJoinSeconds, "seconds"},
      {kDetectSeconds, "seconds"},
      {kRegroupSeconds, "seconds"},
      {kExamples, "examples"},
      {kModelParameters, "parameters"},
      {kDecodedPayloads, "payloads"},
      {kTestAccuracy, "fraction in [0, 1]"},
      {kTestLoss, "loss units"},
      {kTestPerplexity, "perplexity"},
      {kTestBitsPerByte, "bits per byte"},
      {kEpochTrainLoss, "loss units"},
      {kEpochTime, "seconds"},
      {kStoppedEarly, "epoch"},
      {kConsensusDistance, "parameter units"},
      {kStaleness, "steps"},
      {kUpdateLag, "updates"},
  };
  return kKeys;
}

bool is_byte_key(std::string_view key) {
  return key == kBytesSent || key == kBytesReceived || key == kBytesDense || key == kPayloadBytes || key == kLinkBytes ||
         key == kBetweenLinkBytes || key == kBetweenSharedBytes || key == kJoinBytes;
}

Goal goal_of(std::string_view key) {
  for (const char* lower : {"loss", "perplexity", "bits_per_byte", "time", "bytes", kStaleness, "lag", "distance"})
    if (key.find(lower) != std::string_view::npos) return Goal::Min;
  return Goal::Max;
}

}  // namespace laconic::keys
