#include "engine/topology/parameter_server/protocol.hpp"

#include <cstring>
#include <limits>

#include "engine/core/error.hpp"

namespace laconic::topology {
namespace {

// The size word that says "done" instead of a payload's size.
constexpr std::uint64_t kDone = std::numeric_limits<std::uint64_t>::max();
constexpr std::uint64_t kLargestPush = std::uint64_t{1} << 40;

}  // namespace

std::array<std::uint8_t, PushHeader::kBytes> PushHeader::encode() const {
  std::array<std::uint8_t, kBytes> out{};
  const std::uint64_t word = done ? kDone : payload_bytes;
  std::memcpy(out.data(), &word, sizeof word);
  return out;
}

PushHeader PushHeader::decode(std::span<const std::uint8_t, kBytes> bytes, int from) {
  std::uint64_t word = 0;
  std::memcpy(&word, bytes.data(), sizeof word);
  if (word == kDone) return {0, true};
  if (word > kLargestPush) throw CommError(str_cat("worker ", from, " announced a push of ", word, " bytes"));
  return {word, false};
}

std::array<std::uint8_t, PullHeader::kBytes> PullHeader::encode() const {
  std::array<std::uint8_t, kBytes> out{};
  const std::uint64_t words[3] = {payload_bytes, round_messages, round_link_bytes};
  std::memcpy(out.data(), words, sizeof words);
  return out;
}

PullHeader PullHeader::decode(std::span<const std::uint8_t, kBytes> bytes) {
  std::uint64_t words[3] = {0, 0, 0};
  std::memcpy(words, bytes.data(), sizeof words);
  return {words[0], words[1], words[2]};
}

PushHeader receive_push(comm::Communicator& comm, int from, std::vector<std::uint8_t>& payload) {
  std::array<std::uint8_t, PushHeader::kBytes> bytes{};
  comm.send_recv(from, {}, from, bytes);
  const PushHeader header = PushHeader::decode(bytes, from);
  if (header.done) return header;
  payload.resize(header.payload_bytes);
  comm.send_recv(from, {}, from, payload);
  return header;
}

void send_pull(comm::Communicator& comm, int to, const PullHeader& header, std::span<const std::uint8_t> payload) {
  const auto bytes = header.encode();
  comm.send_recv(to, bytes, to, {});
  comm.send_recv(to, payload, to, {});
}

void encode_dense(std::span<const float> values, compress::Payload& payload) {
  payload.resize(values.size_bytes());
  std::memcpy(payload.data(), values.data(), values.size_bytes());
}

void add_dense(std::span<const std::uint8_t> payload, std::span<float> dense) {
  LACONIC_ENFORCE(payload.size() == dense.size_bytes(), "expected a dense payload of ", dense.size_bytes(),
                  " bytes, got ", payload.size());
  for (std::size_t i = 0; i < dense.size(); ++i) {
    float v;
    std::memcpy(&v, payload.data() + 4 * i, 4);
    dense[i] += v;
  }
}

}  // namespace laconic::topology
