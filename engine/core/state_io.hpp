#pragma once
// A component's state as bytes, for checkpoints: a compressor's residuals, momentum, PowerSGD's
// Q, RNG states and step counters; an optimizer's momentum; a schedule's counters. Written and
// read back in the same order by the same component; the reader checks every length, so a
// checkpoint of another configuration is refused.
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "engine/core/error.hpp"

namespace laconic {

class StateWriter {
 public:
  explicit StateWriter(std::vector<std::uint8_t>& out) : out_(out) {}

  void u64(std::uint64_t value) { raw(&value, sizeof value); }
  void i64(std::int64_t value) { raw(&value, sizeof value); }
  void f64(double value) { raw(&value, sizeof value); }
  void flag(bool value) { u64(value ? 1 : 0); }
  /// Length, then the elements.
  template <class T>
  void array(std::span<const T> values) {
    u64(values.size());
    raw(values.data(), values.size_bytes());
  }
  template <class T>
  void array(const std::vector<T>& values) {
    array(std::span<const T>(values));
  }

 private:
  void raw(const void* data, std::size_t bytes) {
    const auto* p = static_cast<const std::uint8_t*>(data);
    out_.insert(out_.end(), p, p + bytes);
  }
  std::vector<std::uint8_t>& out_;
};

class StateReader {
 public:
  explicit StateReader(std::span<const std::uint8_t> in) : in_(in) {}

  std::uint64_t u64() { return read<std::uint64_t>(); }
  std::int64_t i64() { return read<std::int64_t>(); }
  double f64() { return read<double>(); }
  bool flag() { return u64() != 0; }
  /// Reads an array written by StateWriter::array into `values`, resizing it.
  template <class T>
  void array(std::vector<T>& values) {
    const std::uint64_t count = u64();
    LACONIC_ENFORCE(count <= (in_.size() - at_) / sizeof(T), "saved state holds ", count, " elements but only ",
                    in_.size() - at_, " bytes remain");
    values.resize(count);
    raw(values.data(), count * sizeof(T));
  }
  /// Reads an array that must have exactly values.size() elements (an RNG's state words).
  template <class T>
  void array_exact(std::span<T> values) {
    const std::uint64_t count = u64();
    LACONIC_ENFORCE(count == values.size(), "saved state holds ", count, " elements where ", values.size(),
                    " are expected");
    raw(values.data(), values.size_bytes());
  }
  /// True when everything was read.
  bool done() const { return at_ == in_.size(); }

 private:
  template <class T>
  T read() {
    T value;
    raw(&value, sizeof value);
    return value;
  }
  void raw(void* data, std::size_t bytes) {
    LACONIC_ENFORCE(bytes <= in_.size() - at_, "saved state is truncated: ", bytes, " bytes wanted at offset ", at_,
                    " of ", in_.size());
    std::memcpy(data, in_.data() + at_, bytes);
    at_ += bytes;
  }
  std::span<const std::uint8_t> in_;
  std::size_t at_ = 0;
};

}  // namespace laconic
