// laconic's CUDA compressor kernels (engine/compress/cuda/launch.cuh) timed on device-resident
// gradients, as a GPU trainer holds them: each row's median over --repeats runs (CUDA events,
// after 3 warm-ups), its rate over the fewest bytes the row must move, and its time over a
// device-to-device copy of the gradient at the same size (the memory-speed yardstick). --out
// writes the kernels' costs in the hardware profile's format (docs/hardware.md: per compressor,
// compress and decompress as seconds per call plus per element, the line through the smallest
// and the largest size), for scripts/profile-hardware.py --compressors.
//
// usage: laconic_compress_cuda_bench [--sizes N,N,...] [--repeats R] [--out FILE]
//   defaults: --sizes 65536,1000000,10000000,100000000 --repeats 20
// Built with -DLACONIC_WITH_CUDA=ON; needs a GPU to run (exits 77 without one, saying so).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "engine/compress/cuda/kernels.hpp"
#include "engine/compress/cuda/launch.cuh"
#include "engine/compress/element_math.hpp"

using namespace laconic::compress;
using namespace laconic::compress::cuda;

namespace {

struct Options {
  std::vector<std::size_t> sizes = {65536, 1000000, 10000000, 100000000};
  int repeats = 20;
  std::string out;
};

Options parse(int argc, char** argv) {
  Options options;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    auto value = [&]() -> std::string {
      if (a + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
      return argv[++a];
    };
    if (arg == "--sizes") {
      options.sizes.clear();
      std::stringstream list(value());
      for (std::string item; std::getline(list, item, ',');) options.sizes.push_back(std::stoull(item));
    } else if (arg == "--repeats") {
      options.repeats = std::stoi(value());
    } else if (arg == "--out") {
      options.out = value();
    } else {
      throw std::invalid_argument("unknown argument " + arg +
                                  " (usage: laconic_compress_cuda_bench [--sizes N,N,...] [--repeats R] [--out FILE])");
    }
  }
  if (options.sizes.empty() || options.repeats < 1)
    throw std::invalid_argument("--sizes and --repeats must be positive");
  std::sort(options.sizes.begin(), options.sizes.end());
  return options;
}

// Normal values from element i's two device draws (Box-Muller): a gradient's shape, on the device.
__global__ void normal_kernel(float* values, std::size_t n, std::uint64_t seed) {
  const std::size_t i = thread_item();
  if (i >= n) return;
  const float u1 = element::uniform_of(element::splitmix64_at(seed, 2 * i)) + 1.0f / 16777216.0f;
  const float u2 = element::uniform_of(element::splitmix64_at(seed, 2 * i + 1));
  values[i] = sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
}

__global__ void indices_kernel(std::uint32_t* indices, std::size_t k, std::size_t n, std::uint64_t seed) {
  const std::size_t j = thread_item();
  if (j < k) indices[j] = static_cast<std::uint32_t>(element::splitmix64_at(seed, j) % n);
}

/// One gradient size's device buffers.
struct Buffers {
  explicit Buffers(std::size_t n)
      : n(n),
        k(std::max<std::size_t>(1, n / 100)),
        k_small(std::max<std::size_t>(1, n / 1000)),
        gradient(n),
        residual(n),
        dense(n),
        halves(n),
        bytes(16 + n / 4),
        pairs(8 + 8 * k),
        indices(k),
        block(k),
        workspace(n) {
    normal_kernel<<<blocks_for(n), kThreads>>>(gradient.get(), n, 1);
    normal_kernel<<<blocks_for(n), kThreads>>>(dense.get(), n, 2);
    indices_kernel<<<blocks_for(k), kThreads>>>(indices.get(), k, n, 3);
    check(cudaMemset(residual.get(), 0, 4 * n), "cudaMemset");
    check(cudaDeviceSynchronize(), "setting up");
  }
  std::size_t n, k, k_small;
  DeviceBuffer<float> gradient, residual, dense;
  DeviceBuffer<std::uint16_t> halves;
  DeviceBuffer<std::uint8_t> bytes, pairs;
  DeviceBuffer<std::uint32_t> indices;
  DeviceBuffer<float> block;
  device::Workspace workspace;
};

/// A timed row: what it runs, what must run untimed before each run, the fewest bytes it moves.
struct Row {
  std::string name;
  std::function<void()> run;
  std::function<void()> before;
  double bytes;
};

std::vector<Row> rows_for(Buffers& b) {
  const double n = static_cast<double>(b.n), k = static_cast<double>(b.k);
  const float* g = b.gradient.get();
  auto reset_residual = [&b] { check(cudaMemsetAsync(b.residual.get(), 0, 4 * b.n), "cudaMemsetAsync"); };
  auto nothing = [] {};
  return {
      {"copy", [&b, g] { check(cudaMemcpyAsync(b.dense.get(), g, 4 * b.n, cudaMemcpyDeviceToDevice), "copy"); },
       nothing, 8 * n},
      {"fp16_encode", [&b, g] { device::fp16_encode(g, b.halves.get(), b.n, nullptr); }, nothing, 6 * n},
      {"fp16_decode_add", [&b] { device::fp16_decode_add(b.halves.get(), b.dense.get(), b.n, nullptr); }, nothing,
       10 * n},
      {"bf16_encode", [&b, g] { device::bf16_encode(g, b.halves.get(), b.n, nullptr); }, nothing, 6 * n},
      {"bf16_decode_add", [&b] { device::bf16_decode_add(b.halves.get(), b.dense.get(), b.n, nullptr); }, nothing,
       10 * n},
      {"sign_bits", [&b, g] { device::pack_negative_bits(g, b.bytes.get(), b.n, nullptr); }, nothing, 4 * n + n / 8},
      {"terngrad_compress", [&b, g] { device::terngrad_compress(g, b.n, 7, b.bytes.get(), b.workspace, nullptr); },
       nothing, 4 * n + n / 4},
      {"terngrad_decode_add", [&b] { device::terngrad_decode_add(b.bytes.get(), b.dense.get(), b.n, nullptr); },
       nothing, n / 4 + 8 * n},
      {"topk_1pct", [&b, g] { device::topk_compress(g, b.n, b.k, b.pairs.get(), b.workspace, nullptr); }, nothing,
       4 * n + 8 * k},
      {"topk_1pct_direct",
       [&b, g] { device::topk_compress(g, b.n, b.k, b.pairs.get(), b.workspace, nullptr, TopkPath::direct); }, nothing,
       4 * n + 8 * k},
      {"topk_1pct_prefiltered",
       [&b, g] { device::topk_compress(g, b.n, b.k, b.pairs.get(), b.workspace, nullptr, TopkPath::prefiltered); },
       nothing, 4 * n + 8 * k},
      {"topk_0.1pct", [&b, g] { device::topk_compress(g, b.n, b.k_small, b.pairs.get(), b.workspace, nullptr); },
       nothing, 4 * n + 8 * static_cast<double>(b.k_small)},
      {"topk_1pct_ef",
       [&b, g] {
         device::topk_compress_with_feedback(g, b.residual.get(), b.n, b.k, b.pairs.get(), b.workspace, nullptr);
       },
       reset_residual, 12 * n + 8 * k},
      {"topk_1pct_decode_add", [&b] { device::sparse_pairs_add(b.pairs.get(), b.k, b.dense.get(), nullptr); }, nothing,
       16 * k},
      {"block_randomk_1pct_ef",
       [&b, g] { device::block_with_feedback(g, b.residual.get(), b.n, b.n / 3, b.k, b.block.get(), nullptr); },
       reset_residual, 12 * n},
      {"block_randomk_1pct_decode_add",
       [&b] { device::block_add(b.block.get(), b.n / 3, b.k, b.dense.get(), nullptr); }, nothing, 12 * k},
      {"randomk_1pct_gather", [&b, g] { device::gather(g, b.indices.get(), b.block.get(), b.k, nullptr); }, nothing,
       12 * k},
  };
}

double median_seconds(const Row& row, int repeats) {
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  for (int w = 0; w < 3; ++w) {
    row.before();
    row.run();
  }
  std::vector<double> seconds;
  for (int r = 0; r < repeats; ++r) {
    row.before();
    check(cudaEventRecord(start), "cudaEventRecord");
    row.run();
    check(cudaEventRecord(stop), "cudaEventRecord");
    check(cudaEventSynchronize(stop), row.name.c_str());
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    seconds.push_back(ms / 1e3);
  }
  check(cudaGetLastError(), row.name.c_str());
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(seconds.begin(), seconds.end());
  return seconds[seconds.size() / 2];
}

// compressor name in an experiment -> (compress row, decompress row)
const std::map<std::string, std::pair<std::string, std::string>> kProfileRows = {
    {"fp16", {"fp16_encode", "fp16_decode_add"}},
    {"bf16", {"bf16_encode", "bf16_decode_add"}},
    {"terngrad", {"terngrad_compress", "terngrad_decode_add"}},
    {"topk", {"topk_1pct_ef", "topk_1pct_decode_add"}},
    {"block_randomk", {"block_randomk_1pct_ef", "block_randomk_1pct_decode_add"}},
};

/// The profile's {per_call, per_element} through the smallest and the largest size.
std::string fit(const std::map<std::size_t, double>& by_size) {
  const auto [n1, t1] = *by_size.begin();
  const auto [n2, t2] = *by_size.rbegin();
  const double per_element = n2 > n1 ? std::max(0.0, (t2 - t1) / static_cast<double>(n2 - n1)) : 0.0;
  const double per_call = std::max(0.0, t1 - per_element * static_cast<double>(n1));
  char text[128];
  std::snprintf(text, sizeof text, "{\"per_call\": %.6g, \"per_element\": %.6g}", per_call, per_element);
  return text;
}

void write_profile(const std::string& path, const std::map<std::string, std::map<std::size_t, double>>& seconds,
                   const Options& options) {
  std::ofstream out(path);
  out << "{\"device\": \"" << device_name() << "\",\n \"compressors\": {";
  const char* separator = "\n";
  for (const auto& [compressor, rows] : kProfileRows) {
    out << separator << "  \"" << compressor << "\": {\"compress\": " << fit(seconds.at(rows.first))
        << ", \"decompress\": " << fit(seconds.at(rows.second))
        << ",\n   \"measured_as\": \"laconic_compress_cuda_bench " << rows.first << " / " << rows.second << " on "
        << device_name() << ", medians of " << options.repeats << " at " << options.sizes.front() << " and "
        << options.sizes.back() << " elements\"}";
    separator = ",\n";
  }
  out << "\n }}\n";
  if (!out) throw std::runtime_error("cannot write " + path);
}

}  // namespace

int main(int argc, char** argv) try {
  const Options options = parse(argc, argv);
  std::string why;
  if (!device_available(why)) {
    std::cout << "laconic_compress_cuda_bench: no GPU, nothing measured: " << why << "\n";
    return 77;
  }
  std::cout << "laconic_compress_cuda_bench on " << device_name() << ": medians of " << options.repeats
            << " (CUDA events); GB/s over the fewest bytes a row moves; x copy = time / device copy of the gradient\n\n"
            << "| row | elements | ms | GB/s | x copy |\n|---|---:|---:|---:|---:|\n";
  std::map<std::string, std::map<std::size_t, double>> seconds;
  for (std::size_t n : options.sizes) {
    Buffers buffers(n);
    const std::vector<Row> rows = rows_for(buffers);
    double copy = 0;
    for (const Row& row : rows) {
      const double s = median_seconds(row, options.repeats);
      if (row.name == "copy") copy = s;
      seconds[row.name][n] = s;
      std::printf("| %s | %zu | %.4f | %.0f | %.2f |\n", row.name.c_str(), n, s * 1e3, row.bytes / s / 1e9, s / copy);
    }
    std::fflush(stdout);
  }
  if (!options.out.empty()) {
    write_profile(options.out, seconds, options);
    std::cout << "\nwrote the kernels' costs in the profile's format to " << options.out << "\n";
  }
  return 0;
} catch (const std::exception& e) {
  std::cerr << "laconic_compress_cuda_bench: " << e.what() << "\n";
  return 1;
}
