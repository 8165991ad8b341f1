#pragma once
// One fingerprint of a model's weights, so that replicas can be compared: equal hashes are
// identical bytes (64-bit FNV-1a, engine/core/hash.hpp).
#include <cstdint>

#include "engine/train/models/model.hpp"

namespace laconic::train {

/// What a model's hash covers.
enum class HashedState {
  Parameters,            ///< what synchronous training keeps equal on every replica
  ParametersAndBuffers,  ///< and the buffers (batch-norm statistics): what an evaluation reads
};

/// The FNV-1a hash of the model's parameter bytes, then (ParametersAndBuffers) its buffers'.
std::uint64_t model_hash(Model& model, HashedState what);

}  // namespace laconic::train
