// The compressors' CUDA kernels (engine/compress/cuda/kernels.hpp) give, element for element and
// byte for byte, what the CPU codecs give: fp16 and bf16 through the CPU's conversions, sign bits,
// TernGrad and QSGD codes from the same uniforms, fixed-width packing as pack_bits_to() writes it,
// random-k's gather and error feedback's subtraction. Awkward values included (NaN, infinities,
// subnormals, -0, ties), and lengths that are not multiples of a byte's elements.
//
// Needs a CUDA device: without one the binary prints that its tests were skipped, and why, and
// exits 77 (ctest: "Skipped"). CI compiles and links them wherever nvcc is installed; they ran
// and passed on an H100 (bench/cuda/gpu_check.sh, docs/benchmarks.md). This file holds the main
// and the elementwise kernels; sparse_test.cpp and terngrad_test.cpp the others.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <iostream>
#include <limits>
#include <random>

#include "engine/compress/bitpack.hpp"
#include "engine/compress/cuda/kernels.hpp"
#include "engine/compress/element_math.hpp"
#include "engine/compress/half.hpp"
#include "engine/compress/qsgd.hpp"
#include "tests/compress_cuda/values.hpp"

using namespace laconic::compress;
using namespace laconic::compress::test;

namespace {

bool same_bits(float a, float b) { return element::bits_of(a) == element::bits_of(b); }

/// The same float, or NaN on both sides: IEEE 754 leaves which NaN an arithmetic operation
/// returns to the platform (x86 passes the NaN operand's sign and payload on, CUDA returns its one
/// canonical NaN), so sums and differences that meet a NaN are compared as NaN, the rest bit for bit.
bool same_result(float a, float b) { return same_bits(a, b) || (std::isnan(a) && std::isnan(b)); }

}  // namespace

TEST_CASE("fp16 and bf16 on the device are the CPU codecs' conversions", "[cuda]") {
  const auto v = awkward_values();
  const auto fp16 = cuda::fp16_encode(v), bf16 = cuda::bf16_encode(v);
  REQUIRE(fp16.size() == v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    INFO(i << ": " << v[i]);
    CHECK(fp16[i] == float_to_fp16(v[i]));
    CHECK(bf16[i] == float_to_bf16(v[i]));
  }
  std::vector<float> dense(v.size(), 0.5f), expected(v.size(), 0.5f);
  cuda::fp16_decode_add(fp16, dense);
  for (std::size_t i = 0; i < v.size(); ++i) expected[i] += fp16_to_float(fp16[i]);
  for (std::size_t i = 0; i < v.size(); ++i) {
    INFO(i << ": " << v[i]);
    CHECK(same_result(dense[i], expected[i]));
  }
  std::fill(dense.begin(), dense.end(), 0.5f);
  std::fill(expected.begin(), expected.end(), 0.5f);
  cuda::bf16_decode_add(bf16, dense);
  for (std::size_t i = 0; i < v.size(); ++i) expected[i] += bf16_to_float(bf16[i]);
  for (std::size_t i = 0; i < v.size(); ++i) {
    INFO(i << ": " << v[i]);
    CHECK(same_result(dense[i], expected[i]));
  }
}

TEST_CASE("sign bits on the device are the sign compressors' bit field", "[cuda]") {
  const auto v = awkward_values();
  const auto bits = cuda::pack_negative_bits(v);
  std::vector<std::uint8_t> expected((v.size() + 7) / 8, 0);
  for (std::size_t i = 0; i < v.size(); ++i)
    expected[element::bit_byte(i)] |= static_cast<std::uint8_t>(element::negative_bit(v[i]) << element::bit_in_byte(i));
  CHECK(bits == expected);
}

TEST_CASE("TernGrad's codes on the device are the CPU's for the same draws", "[cuda]") {
  auto v = awkward_values();
  v.resize(970);  // finite values only: a NaN scale sends no codes at all
  float scale = 0;
  for (float x : v) scale = std::max(scale, std::fabs(x));
  const auto u = uniforms(v.size());
  const auto codes = cuda::terngrad_codes(v, scale, u);
  std::vector<std::uint8_t> expected((v.size() + 3) / 4, 0);
  for (std::size_t i = 0; i < v.size(); ++i)
    expected[i / 4] |= static_cast<std::uint8_t>(element::terngrad_code(v[i], scale, u[i]) << (2 * (i % 4)));
  CHECK(codes == expected);
}

TEST_CASE("QSGD's codes on the device are the CPU's for the same draws, degenerate buckets at level 0", "[cuda]") {
  const auto v = awkward_values();  // its NaN and infinities make their buckets degenerate
  const std::size_t bucket = 64;
  const float s = 16;
  std::vector<float> norms;
  for (std::size_t b = 0; b < v.size(); b += bucket)
    norms.push_back(qsgd_bucket_norm(std::span<const float>(v).subspan(b, std::min(bucket, v.size() - b))));
  const auto u = uniforms(v.size());
  const auto codes = cuda::qsgd_codes(v, u, norms, bucket, s);
  REQUIRE(codes.size() == v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    const float scale = element::qsgd_scale(norms[i / bucket], s);
    INFO(i);
    CHECK(codes[i] == (scale == 0.0f ? 0u : element::qsgd_code(v[i], u[i], scale, s)));
  }
  for (unsigned bits : {1u, 3u, 6u, 13u, 32u}) {
    std::vector<std::uint8_t> expected(packed_bytes(codes.size(), bits));
    pack_bits_to(codes.data(), codes.size(), bits, expected.data());
    INFO(bits << " bits");
    CHECK(cuda::pack_fixed(codes, bits) == expected);
  }
}

TEST_CASE("random-k's gather and error feedback's subtraction on the device", "[cuda]") {
  const auto v = awkward_values();
  const std::vector<std::uint32_t> at = {0, 5, 999, 963, 1002, 5};
  const auto kept = cuda::gather(v, at);
  REQUIRE(kept.size() == at.size());
  for (std::size_t j = 0; j < at.size(); ++j) CHECK(same_bits(kept[j], v[at[j]]));
  std::vector<float> residual = v, sent(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) sent[i] = fp16_to_float(float_to_fp16(v[i]));
  cuda::subtract_sent(residual, sent);
  for (std::size_t i = 0; i < v.size(); ++i) {
    INFO(i << ": " << v[i]);
    CHECK(same_result(residual[i], element::residual_after(v[i], sent[i])));
  }
}

int main(int argc, char** argv) {
  std::string why;
  if (!cuda::device_available(why)) {
    std::cout << "laconic_compress_cuda_tests: SKIPPED, no test ran: " << why << "\n";
    return 77;
  }
  std::cout << "laconic_compress_cuda_tests on " << cuda::device_name() << "\n";
  return Catch::Session().run(argc, argv);
}
