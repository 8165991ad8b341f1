#pragma once
// What a step costs on a target machine (a GPU node, or another CPU): per model and batch size the
// seconds of forward, backward and the optimizer and when backward has each gradient ready, and
// per compressor its cost per call and per element. Written by scripts/profile-hardware.py (and
// the compressors' part by bench/compressor_costs.py) or by hand; read by `laconic report
// --hardware` (docs/hardware.md has the file format).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace laconic {

/// The version this laconic reads and writes (`"laconic_hardware_profile": 1`).
inline constexpr int kHardwareProfileVersion = 1;

/// seconds = per_call x calls + per_element x elements x calls.
struct CodecCost {
  double per_call = 0;     ///< s per call
  double per_element = 0;  ///< s per gradient element (the dense vector's length)
  double seconds(double elements, double calls) const { return calls * (per_call + per_element * elements); }
  bool operator==(const CodecCost&) const = default;
};

/// One compressor on the target: compress once per step; decompress once per decoded payload.
struct CompressorCost {
  CodecCost compress, decompress;
  bool operator==(const CompressorCost&) const = default;
};

/// When backward has produced gradients: `elements` of them are ready `after` seconds from its start.
struct GradientReady {
  double after = 0;
  std::int64_t elements = 0;
  bool operator==(const GradientReady&) const = default;
};

/// One model at one batch size (per worker) on the target.
struct ModelStepCost {
  std::string model;  ///< laconic's model name: "lenet5", "mlp", "resnet", "torchscript", ...
  std::int64_t batch_size = 0;
  std::int64_t parameters = 0;                      ///< trainable parameters: tells variants of a model apart
  double forward = 0, backward = 0, optimizer = 0;  ///< s per step
  std::vector<GradientReady> ready;                 ///< in the order backward produces them

  double compute() const { return forward + backward + optimizer; }
  /// Seconds from backward's start until `elements` gradient elements are ready: the first
  /// bucket of an overlapped exchange. `backward` when the profile has no ready times.
  double ready_after(std::int64_t elements) const;
  bool operator==(const ModelStepCost&) const = default;
};

struct HardwareProfile {
  std::string name;                                    ///< "NVIDIA H100 80GB HBM3", "Intel Xeon ... (1 thread)"
  std::string device;                                  ///< "cuda", "cpu"
  std::string origin;                                  ///< the file it was read from, for messages
  nlohmann::json measured = nlohmann::json::object();  ///< how and when it was measured, as written
  std::vector<ModelStepCost> models;
  std::map<std::string, CompressorCost> compressors;  ///< by compressor name

  /// The entry for this model, batch size and parameter count, else the one written in the
  /// experiment for every model (no model name); null if none.
  const ModelStepCost* model(const std::string& name, std::int64_t batch_size, std::int64_t parameters) const;
  /// The costs of a compressor; null if the profile has none (`none` then costs nothing).
  const CompressorCost* compressor(const std::string& name) const;
  /// "lenet5 (batch 64, 61706 parameters), mlp (...)": what the profile covers, for messages.
  std::string models_text() const;
  bool operator==(const HardwareProfile&) const = default;
};

/// Reads a profile from JSON; durations are seconds or texts such as "3.1ms". ConfigError naming
/// `origin` and the field when something is missing, negative or of the wrong kind.
HardwareProfile hardware_profile_from_json(const nlohmann::json& json, const std::string& origin);

/// The same from a file. ConfigError when it cannot be read or parsed.
HardwareProfile read_hardware_profile(const std::string& path);

/// The profile as hardware_profile_from_json reads it back (durations in seconds; a model entry
/// for every run's model has "model": ""); `origin` is not written.
nlohmann::json hardware_profile_to_json(const HardwareProfile& profile);

/// The profile `hardware = by_hand { ... }` writes in the experiment, from its fields as recorded
/// (label, forward, backward, optimizer; durations as texts or seconds): one step cost that every
/// run's model takes, and the compressors of `compressors_file` (a JSON file with a
/// "compressors" object, as bench/compressor_costs.py and laconic_compress_cuda_bench write it)
/// unless it is empty. ConfigError naming the field or the file.
HardwareProfile hardware_profile_by_hand(const nlohmann::json& fields, const std::string& compressors_file);

}  // namespace laconic
