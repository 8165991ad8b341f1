#include "engine/compress/huffman.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

#include "engine/compress/bitpack.hpp"
#include "engine/core/error.hpp"

namespace laconic::compress {

// The word-at-a-time bit I/O below copies little-endian words with memcpy.
static_assert(std::endian::native == std::endian::little, "huffman.cpp assumes little-endian");

namespace {

constexpr unsigned kDecodeTableBits = 11;  // 2048 entries: every code of up to 11 bits in one look
// Codebook entries (see huffman.hpp): '0' same length, '10' and a sign bit one up or down,
// '11' and 5 bits an explicit length or kRunValue, which is followed by a run length.
constexpr std::uint32_t kSame = 0b0;       // 1 bit
constexpr std::uint32_t kUp = 0b001;       // 3 bits: 1, 0, sign 0
constexpr std::uint32_t kDown = 0b101;     // 3 bits: 1, 0, sign 1
constexpr std::uint32_t kExplicit = 0b11;  // 2 bits, then 5 bits of value
constexpr std::uint32_t kRunValue = 31;    // explicit value: a run of unused symbols
constexpr unsigned kRunBits = 16;          // the run length minus 2
constexpr std::size_t kMinRun = 24;        // shorter runs cost less entry by entry
constexpr std::size_t kMaxRun = (std::size_t{1} << kRunBits) + 1;
constexpr std::size_t kCodebookHeaderBytes = 3;  // uint16 m-1, uint8 kind
constexpr std::size_t kDepthLimit = 128;         // Huffman depth for a 64-bit total is at most 92

// Bounds-checked bit-at-a-time reads, for the codebook only (a few hundred bits).
class CheckedBits {
 public:
  explicit CheckedBits(std::span<const std::uint8_t> bytes) : bytes_(bytes) {}
  std::uint32_t read(unsigned n) {
    LACONIC_ENFORCE(position_ + n <= 8 * bytes_.size(), "huffman codebook truncated: needs ", position_ + n,
                    " bits, has ", 8 * bytes_.size());
    std::uint32_t value = 0;
    for (unsigned b = 0; b < n; ++b, ++position_)
      value |= static_cast<std::uint32_t>((bytes_[position_ / 8] >> (position_ % 8)) & 1u) << b;
    return value;
  }
  std::size_t bytes_used() const { return (position_ + 7) / 8; }

 private:
  std::span<const std::uint8_t> bytes_;
  std::size_t position_ = 0;
};

std::uint32_t reverse_bits(std::uint32_t code, unsigned length) {
  std::uint32_t reversed = 0;
  for (unsigned b = 0; b < length; ++b) reversed |= ((code >> b) & 1u) << (length - 1 - b);
  return reversed;
}

// Walks the kind-2 codebook entries of `lengths`, handing each (bits, count) to `emit`.
template <class Emit>
void for_each_entry(std::span<const std::uint8_t> lengths, Emit&& emit) {
  unsigned previous = 0;
  for (std::size_t s = 0; s < lengths.size();) {
    const unsigned length = lengths[s];
    if (length == 0) {
      std::size_t run = 0;
      while (s + run < lengths.size() && lengths[s + run] == 0) ++run;
      if (run >= kMinRun) {
        for (; run >= kMinRun; run -= std::min(run, kMaxRun)) {
          const std::size_t chunk = std::min(run, kMaxRun);
          emit(kExplicit | kRunValue << 2, 7);
          emit(static_cast<std::uint32_t>(chunk - 2), kRunBits);
          s += chunk;
        }
        previous = 0;
        continue;
      }
    }
    if (length == previous)
      emit(kSame, 1);
    else if (length == previous + 1)
      emit(kUp, 3);
    else if (length + 1 == previous)
      emit(kDown, 3);
    else
      emit(kExplicit | length << 2, 7);
    previous = length;
    ++s;
  }
}

}  // namespace

void HuffmanCode::build(std::span<const std::uint64_t> counts) {
  const std::size_t m = counts.size();
  LACONIC_ENFORCE(m >= 1 && m <= kMaxSymbols, "huffman alphabet must have 1 to ", kMaxSymbols, " symbols, got ", m);
  lengths_.assign(m, 0);
  order_.clear();
  for (std::size_t s = 0; s < m; ++s)
    if (counts[s] > 0) order_.emplace_back(counts[s], static_cast<std::uint16_t>(s));
  const std::size_t k = order_.size();
  used_ = k;
  if (k == 1) only_symbol_ = order_[0].second;
  if (k >= 2) {
    // Ascending count; among equal counts the higher symbol first, so that walking from the
    // back hands the shorter lengths to lower symbols.
    std::sort(order_.begin(), order_.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : a.second > b.second;
    });
    // Huffman's merge with two queues (van Leeuwen 1976): leaves in ascending order, and
    // internal nodes, which are created in ascending order of weight.
    const std::size_t nodes = 2 * k - 1;
    weights_.resize(nodes);
    parents_.resize(nodes);
    depths_.resize(nodes);
    for (std::size_t i = 0; i < k; ++i) weights_[i] = order_[i].first;
    std::size_t leaf = 0, internal = k;
    for (std::size_t next = k; next < nodes; ++next) {
      std::size_t pick[2];
      for (auto& p : pick) {
        const bool take_leaf = leaf < k && (internal >= next || weights_[leaf] <= weights_[internal]);
        p = take_leaf ? leaf++ : internal++;
      }
      weights_[next] = weights_[pick[0]] + weights_[pick[1]];
      parents_[pick[0]] = parents_[pick[1]] = static_cast<std::uint32_t>(next);
    }
    depths_[nodes - 1] = 0;
    std::uint32_t depth_counts[kDepthLimit] = {};
    std::size_t deepest = 0;
    for (std::size_t i = nodes - 1; i-- > 0;) {
      depths_[i] = depths_[parents_[i]] + 1;
      if (i < k) {
        LACONIC_ENFORCE(depths_[i] < kDepthLimit, "huffman depth ", depths_[i], " too large: total count overflows");
        ++depth_counts[depths_[i]];
        deepest = std::max<std::size_t>(deepest, depths_[i]);
      }
    }
    // Length limiting, JPEG Annex K.3 (see the class comment). The deepest level of a complete
    // code always holds an even number of codes, so the pairs below exist.
    for (std::size_t i = deepest; i > kMaxLength; --i) {
      while (depth_counts[i] > 0) {
        std::size_t j = i - 2;
        while (j > 0 && depth_counts[j] == 0) --j;
        LACONIC_ENFORCE(j > 0, "huffman length limiting found no shorter code below length ", i);
        depth_counts[i] -= 2;
        depth_counts[i - 1] += 1;
        depth_counts[j + 1] += 2;
        depth_counts[j] -= 1;
      }
    }
    std::size_t next = k;
    for (unsigned length = 1; length <= kMaxLength; ++length)
      for (std::uint32_t c = 0; c < depth_counts[length]; ++c)
        lengths_[order_[--next].second] = static_cast<std::uint8_t>(length);
  }
  assign_codes();
}

void HuffmanCode::assign_codes() {
  std::fill(std::begin(length_counts_), std::end(length_counts_), 0u);
  max_length_ = 0;
  for (std::uint8_t length : lengths_) {
    ++length_counts_[length];
    max_length_ = std::max<unsigned>(max_length_, length);
  }
  length_counts_[0] = 0;
  // Canonical codes (RFC 1951 3.2.2): the first code of each length, then ascending symbols.
  std::uint32_t next_code[kMaxLength + 2] = {};
  std::uint32_t code = 0;
  for (unsigned length = 1; length <= max_length_; ++length) {
    code = (code + length_counts_[length - 1]) << 1;
    next_code[length] = code;
  }
  codes_.assign(lengths_.size(), 0);
  for (std::size_t s = 0; s < lengths_.size(); ++s)
    if (const unsigned length = lengths_[s]; length > 0) codes_[s] = reverse_bits(next_code[length]++, length);
}

std::uint64_t HuffmanCode::coded_bits(std::span<const std::uint64_t> counts) const {
  LACONIC_ENFORCE(counts.size() == lengths_.size(), "expected counts for ", lengths_.size(), " symbols, got ",
                  counts.size());
  std::uint64_t bits = 0;
  for (std::size_t s = 0; s < counts.size(); ++s) bits += counts[s] * lengths_[s];
  return bits;
}

std::size_t HuffmanCode::codebook_bytes() const {
  if (used_ == 0) return kCodebookHeaderBytes;
  if (used_ == 1) return kCodebookHeaderBytes + 2;
  std::size_t bits = 0;
  for_each_entry(lengths_, [&](std::uint32_t, unsigned n) { bits += n; });
  return kCodebookHeaderBytes + (bits + 7) / 8;
}

void HuffmanCode::write_codebook(std::vector<std::uint8_t>& out) const {
  const auto m_minus_1 = static_cast<std::uint16_t>(lengths_.size() - 1);
  const std::uint8_t kind = used_ >= 2 ? 2 : static_cast<std::uint8_t>(used_);
  const std::size_t at = out.size();
  out.resize(at + kCodebookHeaderBytes);
  std::memcpy(out.data() + at, &m_minus_1, 2);
  out[at + 2] = kind;
  if (kind == 1) {
    out.resize(at + kCodebookHeaderBytes + 2);
    std::memcpy(out.data() + at + kCodebookHeaderBytes, &only_symbol_, 2);
  } else if (kind == 2) {
    out.resize(at + codebook_bytes());
    BitSink sink(out.data() + at + kCodebookHeaderBytes);
    for_each_entry(lengths_, [&](std::uint32_t value, unsigned n) { sink.put(value, n); });
    sink.finish();
  }
}

void HuffmanCode::write_codes(std::span<const std::uint16_t> symbols, std::vector<std::uint8_t>& out) const {
  if (used_ <= 1) {
    write_codes(symbols, 0, out);
    return;
  }
  const std::size_t m = lengths_.size();
  std::uint64_t bits = 0;
  for (std::uint16_t s : symbols) {
    LACONIC_ENFORCE(s < m && lengths_[s] > 0, "symbol ", s, " has no huffman code (alphabet ", m, ")");
    bits += lengths_[s];
  }
  write_codes(symbols, bits, out);
}

void HuffmanCode::write_codes(std::span<const std::uint16_t> symbols, std::uint64_t bits,
                              std::vector<std::uint8_t>& out) const {
  if (used_ <= 1) {
    // No bits: every symbol must be the only one (and there are none without a used symbol).
    for (std::uint16_t s : symbols)
      LACONIC_ENFORCE(used_ == 1 && s == only_symbol_, "symbol ", s, " has no huffman code (the code has ", used_,
                      " symbols)");
    LACONIC_ENFORCE(bits == 0, "expected ", bits, " bits of huffman codes, wrote 0");
    return;
  }
  const std::size_t m = lengths_.size();
  const std::size_t at = out.size();
  out.resize(at + static_cast<std::size_t>((bits + 7) / 8));
  // Local copies of the table pointers: stores through the byte pointer could alias the
  // vectors' own pointers, which the compiler would otherwise reload for every symbol.
  const std::uint32_t* codes = codes_.data();
  const std::uint8_t* lengths = lengths_.data();
  std::uint8_t* to = out.data() + at;
  std::uint8_t* const end = out.data() + out.size();
  // Pending bits (fewer than 8 between stores) with the codes appended. Two codes at a time are
  // joined first (at most 48 bits, apart from the chain of appends), then the whole word is stored
  // and the pointer moves on by its complete bytes, without a branch on a word filling up. Bytes
  // past the complete ones are rewritten by the next store.
  static_assert(7 + 2 * kMaxLength <= 64, "two codes and the pending bits must fit in a word");
  std::uint64_t pending = 0;
  unsigned count = 0;
  std::size_t i = 0;
  const auto checked = [&](std::uint16_t s) {
    LACONIC_ENFORCE(s < m && lengths[s] > 0, "symbol ", s, " has no huffman code (alphabet ", m, ")");
    return s;
  };
  const auto append = [&](std::uint16_t s) {
    pending |= static_cast<std::uint64_t>(codes[checked(s)]) << count;
    count += lengths[s];  // < 8 + kMaxLength
  };
  for (; i + 2 <= symbols.size() && end - to >= 8; i += 2) {
    const std::uint16_t a = checked(symbols[i]), b = checked(symbols[i + 1]);
    pending |= (codes[a] | static_cast<std::uint64_t>(codes[b]) << lengths[a]) << count;
    count += lengths[a] + lengths[b];
    std::memcpy(to, &pending, 8);
    to += count >> 3;
    pending >>= count & ~7u;
    count &= 7u;
  }
  // The last few bytes, one at a time.
  for (; i < symbols.size(); ++i) {
    append(symbols[i]);
    for (; count >= 8; count -= 8, pending >>= 8) {
      LACONIC_ENFORCE(to < end, "the huffman codes take more than the ", bits, " bits given");
      *to++ = static_cast<std::uint8_t>(pending);
    }
  }
  if (count > 0) {
    LACONIC_ENFORCE(to < end, "the huffman codes take more than the ", bits, " bits given");
    *to++ = static_cast<std::uint8_t>(pending);
  }
  LACONIC_ENFORCE(to == end, "the huffman codes take fewer than the ", bits, " bits given");
}

std::size_t HuffmanCode::read_codebook(std::span<const std::uint8_t> bytes) {
  LACONIC_ENFORCE(bytes.size() >= kCodebookHeaderBytes, "expected a huffman codebook of at least ",
                  kCodebookHeaderBytes, " bytes, got ", bytes.size());
  std::uint16_t m_minus_1;
  std::memcpy(&m_minus_1, bytes.data(), 2);
  const std::size_t m = std::size_t{m_minus_1} + 1;
  const unsigned kind = bytes[2];
  // Until the codebook is known to be valid this is an empty code, so that a failed read leaves
  // nothing half-built behind.
  used_ = 0;
  lengths_.assign(m, 0);
  codes_.assign(m, 0);
  max_length_ = 0;
  if (kind == 0) return kCodebookHeaderBytes;
  if (kind == 1) {
    LACONIC_ENFORCE(bytes.size() >= kCodebookHeaderBytes + 2, "expected a one-symbol huffman codebook of 5 bytes, got ",
                    bytes.size());
    std::memcpy(&only_symbol_, bytes.data() + kCodebookHeaderBytes, 2);
    LACONIC_ENFORCE(only_symbol_ < m, "huffman codebook symbol ", only_symbol_, " outside an alphabet of ", m);
    used_ = 1;
    return kCodebookHeaderBytes + 2;
  }
  LACONIC_ENFORCE(kind == 2, "unknown huffman codebook kind ", kind, " (expected 0, 1 or 2)");
  CheckedBits in(bytes.subspan(kCodebookHeaderBytes));
  std::size_t used = 0;
  // Kraft's sum in units of 2^-kMaxLength: a complete prefix code sums to exactly 2^kMaxLength.
  std::uint64_t kraft = 0;
  unsigned previous = 0;
  for (std::size_t s = 0; s < m;) {
    unsigned length = previous;
    if (in.read(1) != 0) {
      if (in.read(1) == 0) {
        const bool down = in.read(1) != 0;
        LACONIC_ENFORCE(!down || previous > 0, "huffman codebook steps below length 0 at symbol ", s);
        length = down ? previous - 1 : previous + 1;
      } else {
        length = in.read(5);
        if (length == kRunValue) {
          const std::size_t run = in.read(kRunBits) + std::size_t{2};
          LACONIC_ENFORCE(run <= m - s, "huffman codebook run of ", run, " unused symbols at symbol ", s,
                          " passes the alphabet of ", m);
          s += run;
          previous = 0;
          continue;
        }
      }
    }
    LACONIC_ENFORCE(length <= kMaxLength, "huffman code length ", length, " over the limit of ", kMaxLength);
    if (length > 0) {
      ++used;
      kraft += std::uint64_t{1} << (kMaxLength - length);
    }
    lengths_[s++] = static_cast<std::uint8_t>(length);
    previous = length;
  }
  LACONIC_ENFORCE(used >= 2 && kraft == (std::uint64_t{1} << kMaxLength),
                  "huffman code lengths do not form a complete prefix code: ", used, " symbols, Kraft sum ", kraft,
                  " / ", std::uint64_t{1} << kMaxLength);
  assign_codes();
  used_ = used;

  // Decoding structures: symbols sorted by (length, symbol) and the one-look table.
  std::uint32_t offsets[kMaxLength + 2] = {};
  for (unsigned length = 1; length <= max_length_; ++length)
    offsets[length + 1] = offsets[length] + length_counts_[length];
  sorted_.resize(used_);
  for (std::size_t s = 0; s < m; ++s)
    if (lengths_[s] > 0) sorted_[offsets[lengths_[s]]++] = static_cast<std::uint16_t>(s);
  table_bits_ = std::min(max_length_, kDecodeTableBits);
  table_.assign(std::size_t{1} << table_bits_, 0);
  for (std::size_t s = 0; s < m; ++s) {
    const unsigned length = lengths_[s];
    if (length == 0 || length > table_bits_) continue;
    for (std::uint32_t r = codes_[s]; r < table_.size(); r += 1u << length)
      table_[r] = static_cast<std::uint32_t>(s) << 8 | length;
  }
  return kCodebookHeaderBytes + in.bytes_used();
}

std::vector<std::uint64_t> huffman_counts(std::span<const std::uint16_t> symbols, std::size_t alphabet) {
  std::vector<std::uint64_t> counts(alphabet, 0);
  for (std::uint16_t s : symbols) {
    LACONIC_ENFORCE(s < alphabet, "symbol ", s, " outside an alphabet of ", alphabet);
    ++counts[s];
  }
  return counts;
}

std::vector<std::uint8_t> huffman_encode(std::span<const std::uint16_t> symbols, std::size_t alphabet) {
  HuffmanCode code;
  code.build(huffman_counts(symbols, alphabet));
  std::vector<std::uint8_t> out;
  code.write_codebook(out);
  code.write_codes(symbols, out);
  return out;
}

std::vector<std::uint16_t> huffman_decode(std::span<const std::uint8_t> bytes, std::size_t count) {
  HuffmanCode code;
  const std::size_t codebook = code.read_codebook(bytes);
  std::vector<std::uint16_t> out(count);
  const std::size_t codes = code.read_codes(bytes.subspan(codebook), out);
  LACONIC_ENFORCE(codebook + codes == bytes.size(), "expected a huffman message of ", codebook + codes, " bytes for ",
                  count, " symbols, got ", bytes.size());
  return out;
}

}  // namespace laconic::compress
