#pragma once
// The parameter server's wire format, written once for both sides (worker_side.hpp and the two
// servers). A push is a PushHeader (8 bytes) then the payload; a pull is a PullHeader (24 bytes)
// then the payload. A worker that is done sends a PushHeader saying so, and nothing after it.
#include <array>
#include <cstdint>
#include <span>

#include "engine/comm/communicator.hpp"
#include "engine/compress/compressor.hpp"

namespace laconic::topology {

/// Before every push: how many payload bytes follow, or that the worker has finished.
struct PushHeader {
  std::uint64_t payload_bytes = 0;
  bool done = false;

  static constexpr std::size_t kBytes = 8;
  std::array<std::uint8_t, kBytes> encode() const;
  /// CommError when it announces more than 1 TiB (a garbled stream).
  static PushHeader decode(std::span<const std::uint8_t, kBytes> bytes, int from);
};

/// Before every pull: the payload's bytes, and the round's traffic at the server (messages and
/// link bytes of every push received and every pull sent) so that each worker can project the
/// fan-in it waits for.
struct PullHeader {
  std::uint64_t payload_bytes = 0;
  std::uint64_t round_messages = 0;
  std::uint64_t round_link_bytes = 0;

  static constexpr std::size_t kBytes = 24;
  std::array<std::uint8_t, kBytes> encode() const;
  static PullHeader decode(std::span<const std::uint8_t, kBytes> bytes);
};

/// Receives a PushHeader from `from` (point to point), then its payload into `payload`.
PushHeader receive_push(comm::Communicator& comm, int from, std::vector<std::uint8_t>& payload);

/// Sends a PullHeader and the payload to `to`.
void send_pull(comm::Communicator& comm, int to, const PullHeader& header, std::span<const std::uint8_t> payload);

/// fp32 values as a payload, and a dense payload added into `dense` (InvariantError on a
/// length that does not fit): what travels when a direction is not compressed.
void encode_dense(std::span<const float> values, compress::Payload& payload);
void add_dense(std::span<const std::uint8_t> payload, std::span<float> dense);

}  // namespace laconic::topology
