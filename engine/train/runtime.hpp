#pragma once
// How a rank computes: the threads LibTorch and the BLAS library may use, and which BLAS library
// the process loaded (Debian's libblas.so.3 is whatever the alternatives system points at:
// netlib's reference BLAS, or OpenBLAS, about 2x faster for LeNet-5).
#include <map>
#include <string>

namespace laconic::train {

/// Sets LibTorch's intra-op and inter-op threads and the BLAS library's threads (OpenBLAS, when
/// loaded) to `threads`. The ranks of a run share the machine's cores: one thread each keeps
/// them from contending and keeps step times comparable between runs.
void pin_threads(int threads);

/// Facts for run_facts: "torch_threads", "torch_interop_threads", "blas_library" (the real path
/// of the library that provides sgemm_, or "unknown"), "blas_threads" (OpenBLAS's own count, or
/// "unknown" for a BLAS that cannot say).
std::map<std::string, std::string> runtime_facts();

}  // namespace laconic::train
