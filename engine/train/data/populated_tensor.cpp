#include "engine/train/data/populated_tensor.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <mutex>
#include <set>
#include <utility>

namespace laconic::train {

torch::Tensor populated_empty(const std::vector<std::int64_t>& shape, torch::Dtype dtype) {
  std::int64_t count = 1;
  for (const std::int64_t d : shape) count *= d;
  const auto bytes = static_cast<std::size_t>(count) *
                     c10::elementSize(c10::typeMetaToScalarType(caffe2::TypeMeta::fromScalarType(dtype)));
  constexpr std::size_t kWorthIt = std::size_t{1} << 22;  // below 4 MiB the faults cost little
  if (bytes < kWorthIt) return torch::empty(shape, dtype);
  void* memory = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (memory == MAP_FAILED) return torch::empty(shape, dtype);
  return torch::from_blob(
      memory, shape, [bytes](void* p) { ::munmap(p, bytes); }, torch::TensorOptions(dtype));
}

void populate_pages(const torch::Tensor& tensor) {
#ifdef MADV_POPULATE_READ
  constexpr std::uintptr_t kPage = 4096;
  if (!tensor.defined() || tensor.nbytes() < kPage) return;
  const auto begin = reinterpret_cast<std::uintptr_t>(tensor.data_ptr()) / kPage * kPage;
  const auto end = reinterpret_cast<std::uintptr_t>(tensor.data_ptr()) + tensor.nbytes();
  {
    // Once per process: ranks that are its threads share the split, and walking its page tables
    // again costs a pass over every page. A fork starts over: it has page tables of its own.
    static std::mutex mutex;
    static pid_t owner = 0;
    static std::set<std::pair<std::uintptr_t, std::uintptr_t>> populated;
    std::lock_guard<std::mutex> lock(mutex);
    if (owner != ::getpid()) {
      populated.clear();
      owner = ::getpid();
    }
    if (!populated.insert({begin, end}).second) return;
  }
  ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_READ);  // a hint: failure is harmless
#else
  (void)tensor;
#endif
}

}  // namespace laconic::train
