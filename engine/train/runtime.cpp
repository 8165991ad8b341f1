#include "engine/train/runtime.hpp"

#include <dlfcn.h>

#include <filesystem>

#include <ATen/Parallel.h>

namespace laconic::train {
namespace {

// OpenBLAS's thread controls, looked up at run time: with netlib's BLAS they do not exist.
using SetThreads = void (*)(int);
using GetThreads = int (*)();

template <class F>
F blas_function(const char* name) {
  return reinterpret_cast<F>(::dlsym(RTLD_DEFAULT, name));
}

}  // namespace

void pin_threads(int threads) {
  at::set_num_threads(threads);
  // Allowed once, before any inter-op work; a second call (tests run several workers in one
  // process) throws, and the first setting stands.
  try {
    at::set_num_interop_threads(threads);
  } catch (const std::exception&) {}
  if (auto set = blas_function<SetThreads>("openblas_set_num_threads")) set(threads);
}

std::map<std::string, std::string> runtime_facts() {
  std::map<std::string, std::string> facts;
  facts["torch_threads"] = std::to_string(at::get_num_threads());
  facts["torch_interop_threads"] = std::to_string(at::get_num_interop_threads());
  std::string library = "unknown";
  Dl_info info{};
  void* sgemm = ::dlsym(RTLD_DEFAULT, "sgemm_");
  if (sgemm != nullptr && ::dladdr(sgemm, &info) != 0 && info.dli_fname != nullptr) {
    std::error_code error;
    const auto real = std::filesystem::canonical(info.dli_fname, error);
    library = error ? std::string(info.dli_fname) : real.string();
  }
  facts["blas_library"] = library;
  const auto get = blas_function<GetThreads>("openblas_get_num_threads");
  facts["blas_threads"] = get ? std::to_string(get()) : "unknown";
  return facts;
}

}  // namespace laconic::train
