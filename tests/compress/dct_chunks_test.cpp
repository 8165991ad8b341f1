// DeMo's transform and extraction (engine/compress/dct_chunks.hpp) against a plain reference in
// doubles written from the paper and demo.py's arithmetic: the chunk sides demo.py's
// _get_smaller_split picks, each chunk's orthonormal DCT-II (what demo.py's _dct(I, norm =
// "ortho") builds its basis from), the top-k by magnitude per chunk, the decoding that averages
// over the workers that sent a position; and the promise DeMo's momentum relies on: what was not
// extracted stays in the residual, exactly the coefficients that were not sent.
#include <cmath>
#include <numbers>

#include <catch2/catch.hpp>

#include "engine/compress/dct_chunks.hpp"
#include "engine/compress/random.hpp"

using namespace laconic::compress;

namespace {

std::vector<float> drawn(std::size_t n, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<float> x(n);
  for (float& v : x) v = static_cast<float>(2.0 * rng.uniform() - 1.0);
  return x;
}

// Coefficient (b, d) of the block at (cy, cx) of a rows x cols matrix, in doubles from the
// definition: sum over the block of x c_b cos(pi (2h + 1) b / 2 n1) c_d cos(pi (2w + 1) d / 2 n2).
double reference_coefficient(const std::vector<float>& x, std::size_t cols, std::size_t n1, std::size_t n2,
                             std::size_t cy, std::size_t cx, std::size_t b, std::size_t d) {
  const auto basis = [](std::size_t n, std::size_t i, std::size_t k) {
    const double scale = std::sqrt((k == 0 ? 1.0 : 2.0) / static_cast<double>(n));
    return scale * std::cos(std::numbers::pi * static_cast<double>((2 * i + 1) * k) / (2.0 * static_cast<double>(n)));
  };
  double sum = 0;
  for (std::size_t h = 0; h < n1; ++h)
    for (std::size_t w = 0; w < n2; ++w)
      sum += static_cast<double>(x[(cy * n1 + h) * cols + cx * n2 + w]) * basis(n1, h, b) * basis(n2, w, d);
  return sum;
}

}  // namespace

TEST_CASE("DeMo's chunk side is the largest divisor not above the target", "[compress][demo]") {
  CHECK(chunk_side(64, 64) == 64);
  CHECK(chunk_side(128, 64) == 64);
  CHECK(chunk_side(96, 64) == 48);
  CHECK(chunk_side(100, 64) == 50);
  CHECK(chunk_side(10, 64) == 10);
  CHECK(chunk_side(67, 64) == 1);  // a prime above the target: chunks of one element
  CHECK(chunk_side(1, 64) == 1);
  CHECK(chunk_side(512, 32) == 32);
}

TEST_CASE("DeMo's transform is each chunk's orthonormal 2D DCT-II, and decoding inverts it", "[compress][demo]") {
  // 12 x 20 with target 8: blocks of 6 x 5 (the largest divisors not above 8), 2 x 4 of them.
  const DctChunks chunks({12, 20}, 8);
  REQUIRE(chunks.chunk_elements() == 30);
  REQUIRE(chunks.chunks() == 8);
  const auto x = drawn(240, 1);
  std::vector<float> c(240), back(240);
  chunks.encode(x, c);
  double worst = 0;
  for (std::size_t cy = 0; cy < 2; ++cy)
    for (std::size_t cx = 0; cx < 4; ++cx)
      for (std::size_t b = 0; b < 6; ++b)
        for (std::size_t d = 0; d < 5; ++d) {
          const double expected = reference_coefficient(x, 20, 6, 5, cy, cx, b, d);
          worst = std::max(worst, std::abs(expected - c[(cy * 4 + cx) * 30 + b * 5 + d]));
        }
  INFO("largest difference from the reference in doubles: " << worst);
  CHECK(worst < 1e-5);  // float sums of 30 products of numbers below 1
  chunks.decode(c, back);
  for (std::size_t i = 0; i < 240; ++i) CHECK(back[i] == Approx(x[i]).margin(1e-5));
}

TEST_CASE("DeMo's transform of a vector is per run, and of a 4D tensor per block of [first, rest]",
          "[compress][demo]") {
  const DctChunks vector({12}, 4);  // runs of 4
  REQUIRE(vector.chunk_elements() == 4);
  const auto x = drawn(12, 2);
  std::vector<float> c(12);
  vector.encode(x, c);
  for (std::size_t run = 0; run < 3; ++run)
    for (std::size_t k = 0; k < 4; ++k)
      CHECK(c[run * 4 + k] == Approx(reference_coefficient(x, 12, 1, 4, 0, run, 0, k)).margin(1e-6));
  const DctChunks conv({6, 1, 5, 5}, 64);  // LeNet-5's first convolution: one block of 6 x 25
  CHECK(conv.chunk_elements() == 150);
  CHECK(conv.chunks() == 1);
}

TEST_CASE("DeMo extracts each chunk's k largest coefficients by magnitude", "[compress][demo]") {
  const std::vector<float> c = {0.1f, -0.9f, 0.3f, 0.9f, /* chunk 2 */ 0.0f, 0.2f, -0.5f, 0.4f};
  const ChunkTopk top = extract_topk(c, 4, 2);
  CHECK(top.k == 2);
  // chunk 1: |-0.9| and |0.9| tie; both taken. chunk 2: -0.5 and 0.4. Positions in order.
  CHECK(top.index == std::vector<std::uint16_t>{1, 3, 2, 3});
  CHECK(top.value == std::vector<float>{-0.9f, 0.9f, -0.5f, 0.4f});
  const ChunkTopk tie = extract_topk(std::vector<float>{0.5f, -0.5f, 0.5f}, 3, 2);
  CHECK(tie.index == std::vector<std::uint16_t>{0, 1});  // the earlier positions win a tie
  CHECK(extract_topk(c, 4, 99).k == 4);                 // clamped to the chunk, as demo.py
}

TEST_CASE("DeMo decodes gathered coefficients as the mean over the workers that sent each", "[compress][demo]") {
  ChunkTopk a, b;
  a.k = b.k = 1;
  a.index = {2, 0};  // chunk 1 position 2, chunk 2 position 0
  a.value = {1.0f, 4.0f};
  b.index = {2, 3};
  b.value = {3.0f, -2.0f};
  std::vector<float> c(8, 7.0f);
  scatter_mean({&a, &b}, 4, c);
  // position 2 of chunk 1: (1 + 3) / 2, not / the 2 workers' count of every position
  CHECK(c == std::vector<float>{0, 0, 2.0f, 0, 4.0f, 0, 0, -2.0f});
}

TEST_CASE("what DeMo does not extract stays: the residual's coefficients are the unsent ones", "[compress][demo]") {
  // delta - decode(its own extraction): encoded again, the extracted positions are 0 and every
  // other coefficient is as it was (the transform is orthonormal), so nothing is lost, only
  // delayed, as error feedback promises.
  const DctChunks chunks({16, 24}, 8);
  const auto delta = drawn(384, 3);
  std::vector<float> c(384), sent(384), sent_x(384), residual(384), again(384);
  chunks.encode(delta, c);
  const ChunkTopk top = extract_topk(c, chunks.chunk_elements(), 4);
  scatter_mean({&top}, chunks.chunk_elements(), sent);
  chunks.decode(sent, sent_x);
  for (std::size_t i = 0; i < 384; ++i) residual[i] = delta[i] - sent_x[i];
  chunks.encode(residual, again);
  std::size_t zeroed = 0;
  for (std::size_t i = 0; i < 384; ++i) {
    const bool was_sent = sent[i] != 0.0f;
    zeroed += was_sent ? 1 : 0;
    CHECK(again[i] == Approx(was_sent ? 0.0f : c[i]).margin(1e-5));
  }
  CHECK(zeroed == chunks.chunks() * 4);
}

TEST_CASE("taking the sent coefficients' decoding off, sparsely, is the dense decoding's", "[compress][demo]") {
  const DctChunks chunks({12, 20}, 8);
  const auto x = drawn(240, 4);
  std::vector<float> c(240), sent(240), dense(240), sparse = x;
  chunks.encode(x, c);
  const ChunkTopk top = extract_topk(c, chunks.chunk_elements(), 5);
  scatter_mean({&top}, chunks.chunk_elements(), sent);
  chunks.decode(sent, dense);
  chunks.subtract_decoded(top, sparse);
  for (std::size_t i = 0; i < 240; ++i) CHECK(sparse[i] == Approx(x[i] - dense[i]).margin(1e-6));
}
