// HuffmanCode's decoder (huffman.hpp): a reader of the coded bits a word at a time, the one-look
// table and the canonical walk for long codes, and two interleaved streams. Apart from the
// encoder and the codebook (huffman.cpp), so that each file holds one side of the format; the
// hot loops and the always-inlined decode() they call stay in this one translation unit.
#include <algorithm>
#include <bit>
#include <cstring>

#include "engine/compress/huffman.hpp"
#include "engine/core/error.hpp"

namespace laconic::compress {

// The word-at-a-time reads below copy little-endian words with memcpy.
static_assert(std::endian::native == std::endian::little, "huffman_decode.cpp assumes little-endian");

/// A position in the coded bytes: bits arrive LSB-first into `buffer`, `have` of them valid, and
/// `next` is the next byte to load, so 8 next - have bits are consumed. Past the end of the bytes
/// zeros are shifted in; the reads never leave them.
struct HuffmanCode::Reader {
  const std::uint8_t* data;
  std::size_t size;
  std::size_t next = 0;
  std::uint64_t buffer = 0;
  unsigned have = 0;

  /// At bit `position` of `bytes`.
  Reader(std::span<const std::uint8_t> bytes, std::uint64_t position) : data(bytes.data()), size(bytes.size()) {
    next = static_cast<std::size_t>(position / 8);
    refill();
    const auto skip = static_cast<unsigned>(position % 8);
    buffer >>= skip;
    have -= skip;
  }
  std::uint64_t position() const { return 8 * static_cast<std::uint64_t>(next) - have; }
  /// Whether refill_fast() may load a whole word.
  bool word_left() const { return next + 8 <= size; }
  /// At least 56 bits, without a branch (Giesen: the bits above `have` are loaded again next time).
  void refill_fast() {
    std::uint64_t word;
    std::memcpy(&word, data + next, 8);
    buffer |= word << have;
    next += (63 - have) >> 3;
    have |= 56;
  }
  /// At least 56 bits, anywhere.
  void refill() {
    if (word_left()) {
      refill_fast();
      return;
    }
    for (; have <= 56; have += 8, ++next) buffer |= static_cast<std::uint64_t>(next < size ? data[next] : 0) << have;
  }
};

inline std::uint32_t HuffmanCode::decode(Reader& reader) const {
  const std::uint32_t entry = table_[reader.buffer & ((1u << table_bits_) - 1)];
  unsigned length = entry & 63u;  // the length byte holds at most kMaxLength: a shift count as it is
  std::uint32_t symbol = entry >> 8;
  if (length == 0) symbol = decode_long(reader.buffer, length);
  reader.buffer >>= length;
  reader.have -= length;
  return symbol;
}

HuffmanCode::Reader HuffmanCode::decode_run(Reader reader, std::span<std::uint16_t> out) const {
  std::size_t i = 0;
  // Two codes per refill: a refill leaves at least 56 bits, two codes take at most 48.
  static_assert(2 * kMaxLength <= 56, "two codes must fit in one refill");
  for (; i + 2 <= out.size() && reader.word_left(); i += 2) {
    reader.refill_fast();
    out[i] = static_cast<std::uint16_t>(decode(reader));
    out[i + 1] = static_cast<std::uint16_t>(decode(reader));
  }
  for (; i < out.size(); ++i) {
    if (reader.have < kMaxLength) reader.refill();
    out[i] = static_cast<std::uint16_t>(decode(reader));
  }
  return reader;
}

HuffmanCode::Reader HuffmanCode::decode_two_streams(std::span<const std::uint8_t> bytes,
                                                    std::span<std::uint16_t> out) const {
  const std::size_t count = out.size();
  const std::uint64_t middle = 8 * static_cast<std::uint64_t>(bytes.size() / 2);
  // The second stream's symbols wait in out[parked...], the first stream's go below it. The
  // first half of the bytes holds about half the symbols; a first stream that has more than
  // parked cannot meet the second and decodes everything.
  const std::size_t parked = count / 2 + count / 16;
  Reader first(bytes, 0), second(bytes, middle);
  std::uint64_t starts[kSyncWindow];  // where the second stream's first codes began
  std::size_t done = 0, ahead = 0;    // symbols of the first stream, of the second
  // Both chains in one loop, two codes each per refill, until the first reaches the middle (each
  // stream has as many symbols as the other, within the room of the smaller place).
  const std::size_t room = std::min(parked, count - parked);
  while (first.position() < middle && ahead + 2 <= room && second.word_left()) {
    first.refill_fast();  // the first stream is below the middle: a word is left
    second.refill_fast();
    if (ahead < kSyncWindow) starts[ahead] = second.position();
    out[done] = static_cast<std::uint16_t>(decode(first));
    out[parked + ahead] = static_cast<std::uint16_t>(decode(second));
    if (ahead + 1 < kSyncWindow) starts[ahead + 1] = second.position();
    out[done + 1] = static_cast<std::uint16_t>(decode(first));
    out[parked + ahead + 1] = static_cast<std::uint16_t>(decode(second));
    done += 2;
    ahead += 2;
  }
  // The second stream may have filled its place: the first goes on alone to the middle.
  while (first.position() < middle && done + 2 <= parked) {
    first.refill_fast();
    out[done] = static_cast<std::uint16_t>(decode(first));
    out[done + 1] = static_cast<std::uint16_t>(decode(first));
    done += 2;
  }
  // The first stream goes on until a code of it starts where one of the second's did.
  const std::size_t recorded = std::min(ahead, kSyncWindow);
  std::size_t j = 0;
  while (done < parked) {
    const std::uint64_t at = first.position();
    while (j < recorded && starts[j] < at) ++j;
    if (j == recorded) break;  // past every recorded start: no meeting, the first stream decodes on alone
    if (starts[j] == at) {
      const std::size_t taken = ahead - j;
      // More symbols than are left: bytes past the message's end (refused at the end, by one stream).
      if (taken > count - done) break;
      // Down to where they belong (done <= parked + j: a forward copy is safe).
      std::copy(out.begin() + static_cast<std::ptrdiff_t>(parked + j),
                out.begin() + static_cast<std::ptrdiff_t>(parked + ahead),
                out.begin() + static_cast<std::ptrdiff_t>(done));
      second_stream_symbols_ = taken;
      return decode_run(second, out.subspan(done + taken));
    }
    if (first.have < kMaxLength) first.refill();
    out[done++] = static_cast<std::uint16_t>(decode(first));
  }
  return decode_run(first, out.subspan(done));  // over the parked symbols
}

std::size_t HuffmanCode::read_codes(std::span<const std::uint8_t> bytes, std::span<std::uint16_t> out) const {
  second_stream_symbols_ = 0;
  if (used_ <= 1) {
    LACONIC_ENFORCE(used_ == 1 || out.empty(), "a huffman code without symbols cannot decode ", out.size(), " symbols");
    std::fill(out.begin(), out.end(), only_symbol_);
    return 0;
  }
  const Reader end = out.size() >= kTwoStreamsFrom && bytes.size() >= 64 ? decode_two_streams(bytes, out)
                                                                         : decode_run(Reader(bytes, 0), out);
  // The reads never left `bytes`; the codes must not have either.
  const std::uint64_t consumed = end.position();
  LACONIC_ENFORCE(consumed <= 8 * static_cast<std::uint64_t>(bytes.size()), "huffman codes truncated: decoding ",
                  out.size(), " symbols needs ", consumed, " bits, got ", 8 * static_cast<std::uint64_t>(bytes.size()));
  return static_cast<std::size_t>((consumed + 7) / 8);
}

std::uint32_t HuffmanCode::decode_long(std::uint64_t buffer, unsigned& length) const {
  // Canonical decoding bit by bit (as zlib's puff.c).
  std::uint32_t code = 0, first = 0, index = 0;
  for (length = 1; length <= max_length_; ++length) {
    code |= static_cast<std::uint32_t>(buffer >> (length - 1)) & 1u;
    const std::uint32_t count = length_counts_[length];
    if (code - first < count) break;
    index += count;
    first = (first + count) << 1;
    code <<= 1;
  }
  // A complete code always ends within max_length_ bits (checked in read_codebook).
  return sorted_[index + (code - first)];
}

}  // namespace laconic::compress
