#include "engine/compress/bitpack.hpp"

#include <algorithm>

#include "engine/core/error.hpp"

namespace laconic::compress {

namespace detail {

void throw_bad_write(std::uint32_t value, unsigned bits) {
  if (bits > 32) throw InvariantError(str_cat("bit width must be in [0, 32], got ", bits));
  throw InvariantError(str_cat("value ", value, " does not fit in ", bits, " bits"));
}

void throw_bad_read_width(unsigned bits) {
  throw InvariantError(str_cat("bit width must be in [0, 32], got ", bits));
}

void throw_read_past_end(unsigned bits, std::uint64_t bits_read, std::size_t size) {
  throw InvariantError(str_cat("reading ", bits, " bits at bit ", bits_read,
                               " runs past the end of a ", size, "-byte buffer"));
}

}  // namespace detail

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
  out_.resize(size_ + (pending_bits_ + 7) / 8);
  for (; pending_bits_ > 0; pending_ >>= 8) {
    out_[size_++] = static_cast<std::uint8_t>(pending_);
    pending_bits_ = pending_bits_ > 8 ? pending_bits_ - 8 : 0;
  }
  pending_ = 0;
}

void pack_bits(std::span<const std::uint32_t> values, unsigned bits,
               std::vector<std::uint8_t>& out) {
  LACONIC_ENFORCE(bits >= 1 && bits <= 32, "bit width must be in [1, 32], got ", bits);
  out.reserve(out.size() + packed_bytes(values.size(), bits));
  BitWriter writer(out);
  for (std::uint32_t v : values) writer.write(v, bits);
  writer.finish();
}

void unpack_bits(std::span<const std::uint8_t> data, unsigned bits,
                 std::span<std::uint32_t> values) {
  LACONIC_ENFORCE(bits >= 1 && bits <= 32, "bit width must be in [1, 32], got ", bits);
  const std::size_t need = packed_bytes(values.size(), bits);
  LACONIC_ENFORCE(data.size() >= need, "expected at least ", need, " bytes for ", values.size(),
                  " values of ", bits, " bits, got ", data.size());
  BitReader reader(data);
  for (std::uint32_t& v : values) v = reader.read(bits);
}

}  // namespace laconic::compress
