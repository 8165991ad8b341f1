#include "engine/compress/random.hpp"

#include <algorithm>
#include <array>
#include <deque>
#include <mutex>

#include "engine/core/error.hpp"

namespace laconic::compress {

namespace {

using State = std::array<std::uint64_t, 4>;
constexpr int kBits = 256;
constexpr int kMaxPowers = 40;  // advance() takes steps < 2^40

// A linear map of the 256-bit state: column j is what the state with bit j alone set becomes.
struct BitMatrix {
  std::array<State, kBits> column;
};

State times(const BitMatrix& m, const State& s) {
  State out{};
  for (int j = 0; j < kBits; ++j) {
    const std::uint64_t take = 0 - ((s[j / 64] >> (j % 64)) & 1u);  // all ones when bit j is set
    for (int w = 0; w < 4; ++w) out[w] ^= m.column[j][w] & take;
  }
  return out;
}

State one_update(const State& s) {
  Rng rng;
  std::copy(s.begin(), s.end(), rng.state_words().begin());
  rng.next();
  State out;
  std::copy(rng.state_words().begin(), rng.state_words().end(), out.begin());
  return out;
}

// The update's matrix to the power 2^p, built on first use of that power.
const BitMatrix& update_power(int p) {
  static std::mutex mutex;
  static std::deque<BitMatrix> powers;  // a deque: references to built powers stay valid as it grows
  std::lock_guard lock(mutex);
  while (static_cast<int>(powers.size()) <= p) {
    BitMatrix next;
    for (int j = 0; j < kBits; ++j) {
      State unit{};
      unit[j / 64] = std::uint64_t{1} << (j % 64);
      next.column[j] = powers.empty() ? one_update(unit) : times(powers.back(), powers.back().column[j]);
    }
    powers.push_back(next);
  }
  return powers[static_cast<std::size_t>(p)];
}

}  // namespace

void Rng::advance(std::uint64_t steps) {
  LACONIC_ENFORCE(steps >> kMaxPowers == 0, "Rng::advance takes fewer than 2^", kMaxPowers, " steps, got ", steps);
  State s;
  std::copy(std::begin(state_), std::end(state_), s.begin());
  for (int p = 0; p < kMaxPowers && (steps >> p) != 0; ++p)
    if ((steps >> p) & 1u) s = times(update_power(p), s);
  std::copy(s.begin(), s.end(), std::begin(state_));
}

}  // namespace laconic::compress
