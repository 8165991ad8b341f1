#pragma once
// One thread per rank: the environment variables that pin OpenMP and BLAS libraries to one
// thread. They size their pools when LibTorch is loaded, before main() could, so `laconic` sets
// them before it execs `laconic-engine run` (whose forks are the workers), and exec'd workers get
// them in their environment (controller/launcher.cpp).

namespace laconic::controller {

inline constexpr const char* kPinnedThreadVariables[] = {"OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"};

}  // namespace laconic::controller
