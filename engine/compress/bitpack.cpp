#include "engine/compress/bitpack.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <type_traits>
#include <utility>

#include "engine/compress/bitpack_avx512.hpp"
#include "engine/core/error.hpp"

namespace laconic::compress {

namespace detail {

void throw_bad_write(std::uint32_t value, unsigned bits) {
  if (bits > 32) throw InvariantError(str_cat("bit width must be in [0, 32], got ", bits));
  throw InvariantError(str_cat("value ", value, " does not fit in ", bits, " bits"));
}

void throw_bad_read_width(unsigned bits) { throw InvariantError(str_cat("bit width must be in [0, 32], got ", bits)); }

void throw_read_past_end(unsigned bits, std::uint64_t bits_read, std::size_t size) {
  throw InvariantError(
      str_cat("reading ", bits, " bits at bit ", bits_read, " runs past the end of a ", size, "-byte buffer"));
}

}  // namespace detail

Isa best_isa() {
#if defined(__x86_64__) || defined(__i386__)
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
                      __builtin_cpu_supports("avx512vbmi");
  if (avx512) return Isa::Avx512;
  return __builtin_cpu_supports("avx2") ? Isa::Avx2 : Isa::Baseline;
#else
  return Isa::Baseline;
#endif
}

bool runs_on_this_cpu(Isa isa) { return static_cast<int>(isa) <= static_cast<int>(best_isa()); }

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::Baseline:
      return "baseline";
    case Isa::Avx2:
      return "AVX2";
    case Isa::Avx512:
      return "AVX-512";
  }
  return "?";
}

std::size_t packed_bytes(std::size_t count, unsigned bits) {
  LACONIC_ENFORCE(bits >= 1 && bits <= 32, "bit width must be in [1, 32], got ", bits);
  // count * bits cannot overflow for any count a uint32 header can describe.
  return (count * bits + 7) / 8;
}

void BitWriter::grow() {
  // Using the capacity first keeps steady-state compress() calls free of allocation; the cost
  // is zero-filling the room once per payload.
  const std::size_t want = std::max({out_.capacity(), 2 * out_.size(), size_ + 64});
  out_.resize(want);
}

void BitWriter::finish() {
  out_.resize(size_ + pending_.tail_bytes());
  size_ += pending_.flush(out_.data() + size_);
}

namespace {

// Values one at a time through a 64-bit accumulator, whole bytes out: the tails of
// pack_bits_to()/unpack_bits_from() and widths above 16 bits.
void pack_bytewise(const std::uint32_t* values, std::size_t count, unsigned bits, std::uint8_t* out) {
  const std::uint64_t mask = (std::uint64_t{1} << bits) - 1;
  std::uint64_t pending = 0;
  unsigned pending_bits = 0;  // < 8 between values, so < 40 after adding one
  for (std::size_t i = 0; i < count; ++i) {
    pending |= (values[i] & mask) << pending_bits;
    for (pending_bits += bits; pending_bits >= 8; pending_bits -= 8, pending >>= 8)
      *out++ = static_cast<std::uint8_t>(pending);
  }
  if (pending_bits > 0) *out = static_cast<std::uint8_t>(pending);
}

void unpack_bytewise(const std::uint8_t* in, std::size_t count, unsigned bits, std::uint32_t* values) {
  const std::uint64_t mask = (std::uint64_t{1} << bits) - 1;
  std::uint64_t buffer = 0;
  unsigned buffer_bits = 0;
  for (std::size_t i = 0; i < count; ++i) {
    for (; buffer_bits < bits; buffer_bits += 8) buffer |= std::uint64_t{*in++} << buffer_bits;
    values[i] = static_cast<std::uint32_t>(buffer & mask);
    buffer >>= bits;
    buffer_bits -= bits;
  }
}

// Eight values of W bits fill exactly W bytes: one 64-bit (W <= 8) or 128-bit word, built with
// constant shifts (little-endian hosts, like the header). While a whole word fits in the buffer
// it is loaded or stored whole: a W-byte copy would split into pieces, and reading a word back
// from pieces just stored stalls store-to-load forwarding. A stored word's extra bytes are
// overwritten by the next group.
template <unsigned W>
using GroupWord = std::conditional_t<(W <= 8), std::uint64_t, unsigned __int128>;

template <unsigned W>
std::size_t whole_word_groups(std::size_t groups) {
  constexpr std::size_t extra = sizeof(GroupWord<W>) - W;
  return groups * W >= extra ? (groups * W - extra) / W : 0;
}

template <unsigned W>
GroupWord<W> pack_group(const std::uint32_t* values) {
  constexpr std::uint32_t mask = (std::uint32_t{1} << W) - 1;
  GroupWord<W> word = 0;
  for (unsigned j = 0; j < 8; ++j) word |= static_cast<GroupWord<W>>(values[j] & mask) << (j * W);
  return word;
}

template <unsigned W>
void unpack_group(GroupWord<W> word, std::uint32_t* values) {
  constexpr std::uint32_t mask = (std::uint32_t{1} << W) - 1;
  for (unsigned j = 0; j < 8; ++j) values[j] = static_cast<std::uint32_t>(word >> (j * W)) & mask;
}

template <unsigned W>
void pack_groups(const std::uint32_t* values, std::size_t groups, std::uint8_t* out) {
  const std::size_t whole = whole_word_groups<W>(groups);
  std::size_t g = 0;
  for (; g < whole; ++g, values += 8, out += W) {
    const GroupWord<W> word = pack_group<W>(values);
    std::memcpy(out, &word, sizeof word);
  }
  for (; g < groups; ++g, values += 8, out += W) {
    const GroupWord<W> word = pack_group<W>(values);
    std::memcpy(out, &word, W);
  }
}

template <unsigned W>
void unpack_groups(const std::uint8_t* in, std::size_t groups, std::uint32_t* values) {
  const std::size_t whole = whole_word_groups<W>(groups);
  std::size_t g = 0;
  for (; g < whole; ++g, in += W, values += 8) {
    GroupWord<W> word;
    std::memcpy(&word, in, sizeof word);
    unpack_group<W>(word, values);
  }
  for (; g < groups; ++g, in += W, values += 8) {
    GroupWord<W> word = 0;
    std::memcpy(&word, in, W);
    unpack_group<W>(word, values);
  }
}

using PackGroups = void (*)(const std::uint32_t*, std::size_t, std::uint8_t*);
using UnpackGroups = void (*)(const std::uint8_t*, std::size_t, std::uint32_t*);

// One instantiation per width 1..16, indexed by width - 1: the shifts must be constants for
// the compiler to vectorize a group.
template <unsigned... I>
constexpr std::array<PackGroups, sizeof...(I)> pack_table(std::integer_sequence<unsigned, I...>) {
  return {&pack_groups<I + 1>...};
}
template <unsigned... I>
constexpr std::array<UnpackGroups, sizeof...(I)> unpack_table(std::integer_sequence<unsigned, I...>) {
  return {&unpack_groups<I + 1>...};
}
constexpr auto kPackGroups = pack_table(std::make_integer_sequence<unsigned, 16>{});
constexpr auto kUnpackGroups = unpack_table(std::make_integer_sequence<unsigned, 16>{});

}  // namespace

void pack_bits_to(const std::uint32_t* values, std::size_t count, unsigned bits, std::uint8_t* out, Isa isa) {
  LACONIC_ENFORCE(bits >= 1 && bits <= 32, "bit width must be in [1, 32], got ", bits);
  if (bits > kPackGroups.size()) return pack_bytewise(values, count, bits, out);
  const std::size_t groups = count / 8;
  const std::size_t fast =
      isa == Isa::Avx512 && bits <= detail::kAvx512MaxBits ? detail::pack_groups_avx512(values, groups, bits, out) : 0;
  kPackGroups[bits - 1](values + 8 * fast, groups - fast, out + fast * bits);
  pack_bytewise(values + 8 * groups, count - 8 * groups, bits, out + groups * bits);
}

void unpack_bits_from(const std::uint8_t* in, std::size_t count, unsigned bits, std::uint32_t* values, Isa isa) {
  LACONIC_ENFORCE(bits >= 1 && bits <= 32, "bit width must be in [1, 32], got ", bits);
  if (bits > kUnpackGroups.size()) return unpack_bytewise(in, count, bits, values);
  const std::size_t groups = count / 8;
  const std::size_t fast =
      isa == Isa::Avx512 && bits <= detail::kAvx512MaxBits ? detail::unpack_groups_avx512(in, groups, bits, values) : 0;
  kUnpackGroups[bits - 1](in + fast * bits, groups - fast, values + 8 * fast);
  unpack_bytewise(in + groups * bits, count - 8 * groups, bits, values + 8 * groups);
}

void pack_bits(std::span<const std::uint32_t> values, unsigned bits, std::vector<std::uint8_t>& out) {
  LACONIC_ENFORCE(bits >= 1 && bits <= 32, "bit width must be in [1, 32], got ", bits);
  std::uint32_t high = 0;  // any bit at or above `bits`, in one vectorizable pass
  for (std::uint32_t v : values) high |= bits == 32 ? 0 : v >> bits;
  if (high != 0) {
    for (std::uint32_t v : values)
      if (bits < 32 && (v >> bits) != 0) detail::throw_bad_write(v, bits);
  }
  const std::size_t start = out.size();
  out.resize(start + packed_bytes(values.size(), bits));
  pack_bits_to(values.data(), values.size(), bits, out.data() + start);
}

void unpack_bits(std::span<const std::uint8_t> data, unsigned bits, std::span<std::uint32_t> values) {
  LACONIC_ENFORCE(bits >= 1 && bits <= 32, "bit width must be in [1, 32], got ", bits);
  const std::size_t need = packed_bytes(values.size(), bits);
  LACONIC_ENFORCE(data.size() >= need, "expected at least ", need, " bytes for ", values.size(), " values of ", bits,
                  " bits, got ", data.size());
  unpack_bits_from(data.data(), values.size(), bits, values.data());
}

}  // namespace laconic::compress
