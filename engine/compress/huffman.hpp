#pragma once
// Canonical Huffman coding of symbols 0..m-1 (m <= 65536), used by the adaptive quantizer to
// code its bin indices (Huffman 1952; canonical codes as in DEFLATE, RFC 1951 section 3.2.2).
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace laconic::compress {

/// A canonical Huffman code built from symbol counts, with its compact serialized codebook.
///
/// Code lengths are those of an optimal (Huffman) code, limited to kMaxLength bits by the
/// length-limiting procedure of JPEG (ITU T.81, Annex K.3, "Adjust_BITS"): while a length above
/// the limit is used, two codes of the deepest length L are replaced by one code of length L-1
/// and a code of the deepest length j < L-1 that is in use becomes two codes of length j+1
/// (Kraft's sum stays exactly 1). Lengths are then handed out shortest-first to symbols in
/// decreasing count (ties: lower symbol first), and codes are assigned canonically (by length,
/// then symbol). Without limiting (the usual case) the result is an optimal code.
/// A code with a single used symbol has length 0: its symbols cost no bits at all.
///
/// Codes are written LSB-first (bit i of the stream is bit i%8 of byte i/8), the first bit of a
/// code (its most significant) first, and the last byte is zero-padded.
///
/// Codebook layout (little-endian):
///   uint16 m-1 | uint8 kind | ...
///     kind 0 (no symbol used):  nothing more
///     kind 1 (one symbol used): uint16 symbol
///     kind 2 (two or more):     the code lengths of the symbols in order (0: unused), as a
///                               bit stream (LSB-first, zero-padded to a byte) of entries
///                               relative to the previous length (0 before the first symbol):
///                                 0          the same length again
///                                 1 0 s      one more (s = 0) or one less (s = 1)
///                                 1 1 vvvvv  length v (0..24), or v = 31: a run of unused
///                                            symbols, its length minus 2 in the next 16 bits
///                               The writer uses runs for 24 or more unused symbols. Smooth
///                               histograms cost little over 1 bit per symbol.
class HuffmanCode {
 public:
  /// The longest code, in bits.
  static constexpr unsigned kMaxLength = 24;
  /// The largest alphabet, in symbols.
  static constexpr std::size_t kMaxSymbols = 65536;

  /// Builds the code for an alphabet of counts.size() symbols (1..65536); counts[s] is how often
  /// symbol s occurs (0: unused, gets no code). The total count must fit in 64 bits.
  void build(std::span<const std::uint64_t> counts);

  /// Symbols in the alphabet (m).
  std::size_t alphabet() const { return lengths_.size(); }
  /// Code length of `symbol` in bits (0 for an unused symbol or the only used one).
  unsigned length(std::size_t symbol) const { return lengths_[symbol]; }
  /// Code lengths of all symbols, in bits.
  std::span<const std::uint8_t> lengths() const { return lengths_; }
  /// Symbols that have a use (nonzero count, or a nonzero length read from a codebook).
  std::size_t used_symbols() const { return used_; }

  /// Bits the codes of `counts` take: sum of counts[s] * length(s).
  std::uint64_t coded_bits(std::span<const std::uint64_t> counts) const;

  /// Bytes of the serialized codebook.
  std::size_t codebook_bytes() const;
  /// Appends the serialized codebook (codebook_bytes() bytes) to `out`.
  void write_codebook(std::vector<std::uint8_t>& out) const;
  /// Appends the codes of `symbols`, zero-padded to a byte, to `out`. InvariantError for a
  /// symbol outside the alphabet or without a code.
  void write_codes(std::span<const std::uint16_t> symbols, std::vector<std::uint8_t>& out) const;
  /// The same in one pass when their length is known: `bits` = coded_bits() of the symbols'
  /// counts. InvariantError also when the codes do not take exactly `bits` bits.
  void write_codes(std::span<const std::uint16_t> symbols, std::uint64_t bits, std::vector<std::uint8_t>& out) const;

  /// Replaces this code by the one serialized at the front of `bytes`; returns the bytes it
  /// took. InvariantError when the codebook is truncated or invalid (lengths over kMaxLength,
  /// runs past the alphabet, lengths that do not form a complete prefix code).
  std::size_t read_codebook(std::span<const std::uint8_t> bytes);
  /// Decodes out.size() symbols from the front of `bytes` into `out`; returns the bytes the codes
  /// took (bits rounded up to a byte). InvariantError when `bytes` ends before the last code.
  std::size_t read_codes(std::span<const std::uint8_t> bytes, std::span<std::uint16_t> out) const;
  /// Symbols the last read_codes() took from its second stream (0 when it decoded in one).
  ///
  /// Decoding is a chain: where a code starts depends on every code before it. From 2^14
  /// symbols read_codes() also decodes from the middle of the bytes, interleaved with the first
  /// stream so that the two chains overlap. That start is a guess (a code may straddle it), but
  /// Huffman codes resynchronize: once the first stream reaches a position where the second had a
  /// code start, every later code of the two agrees, and the second stream's symbols from there
  /// on are the message's. The first stream checks for that meeting against the second's first
  /// kSyncWindow code starts; without one it decodes on alone. The result is the same either way.
  std::size_t second_stream_symbols() const { return second_stream_symbols_; }

 private:
  struct Reader;  // a position in the coded bytes (huffman_decode.cpp)
  static constexpr std::size_t kTwoStreamsFrom = std::size_t{1} << 14;
  static constexpr std::size_t kSyncWindow = 256;

  void assign_codes();
  /// The next symbol at `reader`, which holds at least max_length_ bits; consumes its code.
  /// Always inlined: the readers of a decoding loop must stay in registers.
  [[gnu::always_inline]] inline std::uint32_t decode(Reader& reader) const;
  /// decode()'s slow path: a code longer than the table, bit by bit from the low bits of `buffer`;
  /// sets `length`.
  std::uint32_t decode_long(std::uint64_t buffer, unsigned& length) const;
  /// Decodes out.size() symbols at `reader` into `out`, one stream; returns where they end.
  /// (Readers go by value, so that no loop's reader has its address taken.)
  Reader decode_run(Reader reader, std::span<std::uint16_t> out) const;
  /// read_codes() with the second stream (see second_stream_symbols()), whose symbols wait in the
  /// upper part of `out` until the first stream meets it; returns where the codes end.
  Reader decode_two_streams(std::span<const std::uint8_t> bytes, std::span<std::uint16_t> out) const;

  std::vector<std::uint8_t> lengths_;  // per symbol, bits
  std::vector<std::uint32_t> codes_;   // per symbol, bit-reversed (ready for LSB-first)
  std::size_t used_ = 0;
  std::uint16_t only_symbol_ = 0;  // the symbol of a one-symbol code
  unsigned max_length_ = 0;
  std::uint32_t length_counts_[kMaxLength + 1] = {};  // codes per length
  std::vector<std::uint16_t> sorted_;                 // used symbols by (length, symbol), for slow decoding
  // Decoding table indexed by the next table_bits_ bits: symbol << 8 | length, or 0 for codes
  // longer than table_bits_ (decoded bit by bit).
  unsigned table_bits_ = 0;
  std::vector<std::uint32_t> table_;
  mutable std::size_t second_stream_symbols_ = 0;  // of the last read_codes()
  // Scratch for build(): (count, symbol) of used symbols, tree weights, parents, depths.
  std::vector<std::pair<std::uint64_t, std::uint16_t>> order_;
  std::vector<std::uint64_t> weights_;
  std::vector<std::uint32_t> parents_;
  std::vector<std::uint32_t> depths_;
};

/// Counts of each symbol of `symbols` over an alphabet of `alphabet` symbols.
std::vector<std::uint64_t> huffman_counts(std::span<const std::uint16_t> symbols, std::size_t alphabet);

/// Codes `symbols` (each < alphabet, alphabet in [1, 65536]) as one message: the codebook of
/// their counts, then the codes.
std::vector<std::uint8_t> huffman_encode(std::span<const std::uint16_t> symbols, std::size_t alphabet);

/// Decodes `count` symbols from a message of huffman_encode(); InvariantError when the message
/// is truncated, corrupted, or longer than its codes.
std::vector<std::uint16_t> huffman_decode(std::span<const std::uint8_t> bytes, std::size_t count);

}  // namespace laconic::compress
