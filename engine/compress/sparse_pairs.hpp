#pragma once
// The sparse wire format shared by topk, randomk (own indices), threshold and dgc: an 8-byte
// header (uint32 n, uint32 count), then count uint32 indices, then count float32 values.
#include <cstddef>
#include <span>

#include "engine/compress/compressor.hpp"

namespace laconic::compress {

/// Bytes of a sparse payload carrying `count` entries: 8 + 8 * count.
std::size_t sparse_pairs_bytes(std::size_t count);

/// Checks a sparse payload against a dense vector of dense.size() elements (header length,
/// exact size, every index in range; messages name `what` and both values) and adds it in.
void add_sparse_pairs(const Payload& payload, std::span<float> dense, const char* what);

/// The same checks, then residual[i] = -(-residual[i] + value) at each index: bit for bit what
/// negating the residual, add_sparse_pairs and negating back give (error feedback's
/// "corrected - sent", signed zeros and NaNs included), touching only the sent elements.
void subtract_sparse_pairs(const Payload& payload, std::span<float> residual, const char* what);

}  // namespace laconic::compress
