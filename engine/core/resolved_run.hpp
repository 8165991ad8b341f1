#pragma once
// What the engine resolved a run's configuration into when it planned it, once: how many ranks
// it has and where they live, and what its compressor is (its registered capabilities, not its
// name). The controller stores it as the run fact `resolved` (JSON with a version), and the
// reports read a compressor's nature from there. docs/schema.md, "run_facts".
#include <cstdint>
#include <optional>
#include <string>

namespace laconic {

/// A compressor's nature, as its built instance declares it (compress::Capabilities and
/// CompressorTraits).
struct ResolvedCompressor {
  /// The payload is the gradient itself in fp32 and decodes to exactly it (none): nothing is
  /// compressed, and there is no coding work.
  bool full_precision = false;
  /// Payloads of different workers can be summed in compressed form, so an allreduce carries
  /// them and each worker decodes one sum.
  bool summable = false;
  /// A payload's size follows from the gradient's size alone.
  bool fixed_size = false;
  /// Its exchange needs more than one collective (PowerSGD).
  bool multi_round = false;

  bool operator==(const ResolvedCompressor&) const = default;
};

struct ResolvedRun {
  /// Raised when a field changes meaning; a fact of another version is not read.
  static constexpr int kVersion = 1;
  /// The run fact that holds it.
  static constexpr const char* kFact = "resolved";

  std::int64_t workers = 0;
  int world_size = 0;         ///< workers and the topology's servers
  bool thread_ranks = false;  ///< placement = threads(): every rank a thread of one process
  ResolvedCompressor compressor;

  /// {"version": 1, "workers": ..., "world_size": ..., "thread_ranks": ...,
  ///  "compressor": {"full_precision": ..., "summable": ..., "fixed_size": ..., "multi_round": ...}}
  std::string to_json() const;
  /// The fact's text read back; nullopt for text that is not a fact of this version.
  static std::optional<ResolvedRun> from_json(const std::string& text);

  bool operator==(const ResolvedRun&) const = default;
};

}  // namespace laconic
