// DeMo's chunked DCT and its top-k per chunk on the device against the CPU's DctChunks and
// extract_topk (engine/compress/dct_chunks.hpp): the coefficients and the decoded layer within
// float rounding (the device sums in another order), the same positions and values chosen on
// values without ties. Skipped without a GPU (kernels_test.cpp's main).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "engine/compress/cuda/kernels.hpp"
#include "engine/compress/dct_chunks.hpp"
#include "tests/compress_cuda/values.hpp"

using namespace laconic::compress;
using namespace laconic::compress::test;

TEST_CASE("DeMo's chunked DCT and its top-k on the device are the CPU's", "[cuda][demo]") {
  struct Case {
    std::size_t rows, cols;
  };
  for (const Case c : {Case{128, 192}, Case{64, 64}, Case{1, 512}, Case{96, 40}}) {
    INFO(c.rows << " x " << c.cols);
    const std::vector<std::int64_t> shape = c.rows == 1 ? std::vector<std::int64_t>{static_cast<std::int64_t>(c.cols)}
                                                        : std::vector<std::int64_t>{static_cast<std::int64_t>(c.rows),
                                                                                    static_cast<std::int64_t>(c.cols)};
    const DctChunks chunks(shape, 64);
    const auto n1 = static_cast<std::size_t>(c.rows == 1 ? 1 : chunk_side(static_cast<std::int64_t>(c.rows), 64));
    const auto n2 = static_cast<std::size_t>(chunk_side(static_cast<std::int64_t>(c.cols), 64));
    REQUIRE(n1 * n2 == chunks.chunk_elements());
    const cuda::DctBases bases{dct_basis(static_cast<std::int64_t>(n1)), dct_basis(static_cast<std::int64_t>(n2)), n1,
                               n2};
    const std::vector<float> x = normal_values(c.rows * c.cols, 11);
    std::vector<float> cpu(x.size());
    chunks.encode(x, cpu);
    const std::vector<float> gpu = cuda::dct_chunks_encode(x, c.rows, c.cols, bases);
    REQUIRE(gpu.size() == cpu.size());
    for (std::size_t i = 0; i < cpu.size(); ++i) REQUIRE(gpu[i] == Approx(cpu[i]).margin(1e-4));
    std::vector<float> back(x.size());
    chunks.decode(cpu, back);
    const std::vector<float> gpu_back = cuda::dct_chunks_decode(cpu, c.rows, c.cols, bases);
    for (std::size_t i = 0; i < x.size(); ++i) REQUIRE(gpu_back[i] == Approx(back[i]).margin(1e-4));
    // The top-k of the CPU's coefficients (normal values: no ties), 32 a chunk as DeMo's default.
    const std::size_t k = std::min<std::size_t>(32, chunks.chunk_elements());
    const ChunkTopk expected = extract_topk(cpu, chunks.chunk_elements(), k);
    const cuda::ChunkTopkResult got = cuda::chunk_topk(cpu, chunks.chunk_elements(), k);
    CHECK(got.index == expected.index);
    CHECK(got.value == expected.value);
  }
}
