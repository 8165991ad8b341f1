#pragma once
// Fixed-width bit packing, LSB-first: the first value occupies the lowest bits of the first byte,
// and a value that does not fit in what is left of a byte continues in the low bits of the next.
// BitWriter/BitReader are the primitives the packed codecs (QSGD, TernGrad, uniform, Elias) share.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace laconic::compress {

/// Instruction sets the packed codecs (QSGD, TernGrad, threshold, uniform) compile their element
/// loops for, chosen at run time, each a superset of the one before: the baseline x86-64 (SSE2,
/// or whatever the build targets), AVX2, and AVX-512 (F, BW, DQ, VL and VBMI, as on Zen 4 and
/// Ice Lake or later). The loops are the same source without fused multiply-adds, or integer
/// operations only, so every choice gives the same bytes. A codec without loops of its own for
/// AVX-512 runs its AVX2 loops there.
enum class Isa { Baseline, Avx2, Avx512 };

/// The fastest Isa this CPU runs (Baseline where the compiler does not target x86).
Isa best_isa();

/// Whether this CPU runs `isa`'s loops: isa is best_isa() or below.
bool runs_on_this_cpu(Isa isa);

/// "baseline", "AVX2" or "AVX-512", for messages and test names.
const char* isa_name(Isa isa);

namespace detail {
// Out of line, so that the inline write()/read() stay small. All throw InvariantError.
[[noreturn]] void throw_bad_write(std::uint32_t value, unsigned bits);
[[noreturn]] void throw_bad_read_width(unsigned bits);
[[noreturn]] void throw_read_past_end(unsigned bits, std::uint64_t bits_read, std::size_t size);
}  // namespace detail

/// Bytes that `count` values of `bits` bits each occupy: ceil(count * bits / 8).
std::size_t packed_bytes(std::size_t count, unsigned bits);

namespace detail {
/// The accumulator every LSB-first bit writer here shares: pending bits, lowest first, leaving
/// a whole little-endian 32-bit word at a time.
struct PendingBits {
  std::uint64_t bits = 0;
  unsigned count = 0;  ///< < 32 between words

  /// Adds the low `n` bits of `value` (n <= 32, higher bits zero); true when a word is ready.
  bool push(std::uint32_t value, unsigned n) {
    bits |= static_cast<std::uint64_t>(value) << count;
    count += n;  // < 64: count < 32 on entry
    return count >= 32;
  }
  /// Stores the ready word at `to` (4 bytes).
  void pop_word(std::uint8_t* to) {
    to[0] = static_cast<std::uint8_t>(bits);
    to[1] = static_cast<std::uint8_t>(bits >> 8);
    to[2] = static_cast<std::uint8_t>(bits >> 16);
    to[3] = static_cast<std::uint8_t>(bits >> 24);
    bits >>= 32;
    count -= 32;
  }
  /// Bytes flush() stores: the pending bits rounded up to a byte.
  std::size_t tail_bytes() const { return (count + 7) / 8; }
  /// Stores the pending bits at `to`, the last byte zero-padded; returns tail_bytes().
  std::size_t flush(std::uint8_t* to) {
    const std::size_t n = tail_bytes();
    for (std::size_t i = 0; i < n; ++i, bits >>= 8) to[i] = static_cast<std::uint8_t>(bits);
    bits = 0;
    count = 0;
    return n;
  }
};
}  // namespace detail

/// Writes bits LSB-first into memory the caller has sized (for a known total, e.g. with
/// packed_bytes()): values of any width up to 32 bits, such as Huffman codes. No checks, for
/// inner loops; finish() stores the last, zero-padded byte.
class BitSink {
 public:
  explicit BitSink(std::uint8_t* out) : out_(out) {}
  /// Appends the low `n` bits of `value` (n <= 32, higher bits zero).
  void put(std::uint32_t value, unsigned n) {
    if (pending_.push(value, n)) {
      pending_.pop_word(out_);
      out_ += 4;
    }
  }
  void finish() { out_ += pending_.flush(out_); }

 private:
  std::uint8_t* out_;
  detail::PendingBits pending_;
};

/// Appends bits to the end of a byte vector, LSB-first. Call finish() once after the last
/// write(): it flushes the last, zero-padded byte and gives `out` its final size. Until then
/// `out` may hold scratch bytes past what was written (bytes before the writer's start, such as
/// a header, can be written to meanwhile).
class BitWriter {
 public:
  /// Writes after the current end of `out` (existing bytes, e.g. a header, are kept).
  explicit BitWriter(std::vector<std::uint8_t>& out) : out_(out), size_(out.size()) {}

  /// Appends the low `bits` bits of `value`; bits in [0, 32] (0 writes nothing). `value` must
  /// fit in `bits` bits. Inline: the packed codecs call it once per element.
  void write(std::uint32_t value, unsigned bits) {
    if (bits > 32 || (static_cast<std::uint64_t>(value) >> bits) != 0) [[unlikely]]
      detail::throw_bad_write(value, bits);
    bits_written_ += bits;
    // Whole 32-bit words leave at once, into room made ahead (no size bookkeeping per byte).
    if (pending_.push(value, bits)) {
      if (out_.size() - size_ < 4) [[unlikely]]
        grow();
      pending_.pop_word(out_.data() + size_);
      size_ += 4;
    }
  }

  /// Flushes the pending bits, padding the last byte with zeros, and trims `out` to the bytes
  /// written.
  void finish();

  /// Bits written so far (excluding padding).
  std::uint64_t bits_written() const { return bits_written_; }

 private:
  void grow();  // resizes out_ to its capacity, or doubles it when full

  std::vector<std::uint8_t>& out_;
  std::size_t size_;  // bytes of out_ in use; the rest is room to write into
  detail::PendingBits pending_;
  std::uint64_t bits_written_ = 0;
};

/// Reads bits written by BitWriter. Reading past the end of the buffer throws InvariantError.
class BitReader {
 public:
  /// Reads from `data`, which must outlive the reader.
  explicit BitReader(std::span<const std::uint8_t> data) : data_(data) {}

  /// The next `bits` bits as an unsigned value; bits in [0, 32] (0 returns 0). Inline: the
  /// packed codecs call it once per element.
  std::uint32_t read(unsigned bits) {
    if (bits > 32) [[unlikely]]
      detail::throw_bad_read_width(bits);
    while (buffer_bits_ < bits) {
      if (next_byte_ >= data_.size()) [[unlikely]]
        detail::throw_read_past_end(bits, bits_read_, data_.size());
      buffer_ |= static_cast<std::uint64_t>(data_[next_byte_++]) << buffer_bits_;
      buffer_bits_ += 8;  // stays < 40: bytes load only while below `bits` <= 32
    }
    const std::uint64_t mask = (std::uint64_t{1} << bits) - 1;
    const auto value = static_cast<std::uint32_t>(buffer_ & mask);
    buffer_ >>= bits;
    buffer_bits_ -= bits;
    bits_read_ += bits;
    return value;
  }

  /// Bits read so far.
  std::uint64_t bits_read() const { return bits_read_; }

  /// Bytes the reads so far have touched: ceil(bits_read() / 8).
  std::size_t bytes_read() const { return static_cast<std::size_t>((bits_read_ + 7) / 8); }

 private:
  std::span<const std::uint8_t> data_;
  std::size_t next_byte_ = 0;  // first byte not yet loaded into buffer_
  std::uint64_t buffer_ = 0;   // loaded, unread bits, lowest first
  unsigned buffer_bits_ = 0;
  std::uint64_t bits_read_ = 0;
};

/// Writes values[0, count), `bits` bits each (bits in [1, 32]; higher bits of a value are
/// dropped), to exactly out[0, packed_bytes(count, bits)): the bytes a BitWriter starting at a
/// byte boundary would write. Groups of 8 values, which fill `bits` whole bytes, go at once
/// (vectorizable for bits <= 16; with Isa::Avx512, eight groups at once for bits <= 8).
void pack_bits_to(const std::uint32_t* values, std::size_t count, unsigned bits, std::uint8_t* out,
                  Isa isa = best_isa());

/// Reads `count` values of `bits` bits (bits in [1, 32]) from in[0, packed_bytes(count, bits)),
/// and no further, into values[0, count); the inverse of pack_bits_to().
void unpack_bits_from(const std::uint8_t* in, std::size_t count, unsigned bits, std::uint32_t* values,
                      Isa isa = best_isa());

/// Appends packed_bytes(values.size(), bits) bytes holding `values`, each of `bits` bits
/// (bits in [1, 32]; every value must fit).
void pack_bits(std::span<const std::uint32_t> values, unsigned bits, std::vector<std::uint8_t>& out);

/// Fills `values` from the first packed_bytes(values.size(), bits) bytes of `data`; throws
/// InvariantError when `data` is shorter.
void unpack_bits(std::span<const std::uint8_t> data, unsigned bits, std::span<std::uint32_t> values);

}  // namespace laconic::compress
