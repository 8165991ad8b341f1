#pragma once
// Runs a function on ranks that are threads of this process, each with its own GlooCommunicator
// over a FileStore in a fresh directory (the benches depend on laconic::comm alone, so they do
// not include tests/comm/rank_threads.hpp, which does the same for the tests).
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "engine/comm/gloo_communicator.hpp"
#include "engine/core/error.hpp"

namespace laconic::bench {

/// Limit for rendezvous and every transfer; a stuck rank fails the run instead of hanging it.
constexpr std::chrono::milliseconds kRankTimeout{60'000};

/// Calls fn(comm) on `size` ranks at once, then a barrier so no rank closes its connections
/// while a peer still uses them; rethrows the first rank's exception.
inline void run_ranks(int size, const std::function<void(comm::Communicator&)>& fn) {
  std::string dir = (std::filesystem::temp_directory_path() / "laconic-bench-XXXXXX").string();
  if (::mkdtemp(dir.data()) == nullptr) throw Error(str_cat("mkdtemp failed for '", dir, "'"));
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(size));
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r)
    threads.emplace_back([&, r] {
      try {
        comm::GlooOptions options;
        options.rank = r;
        options.size = size;
        options.store_dir = dir;
        options.timeout = kRankTimeout;
        comm::GlooCommunicator comm(options);
        fn(comm);
        comm.barrier();
      } catch (...) {
        errors[static_cast<std::size_t>(r)] = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  std::filesystem::remove_all(dir);
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

/// Per repetition, the slowest rank's seconds inside the timed call (a collective ends when its
/// last rank leaves it).
inline std::vector<double> slowest_rank(const std::vector<std::vector<double>>& seconds) {
  std::vector<double> out;
  for (const auto& per_rank : seconds) out.push_back(*std::max_element(per_rank.begin(), per_rank.end()));
  return out;
}

inline double quantile(std::vector<double> v, double q) {
  LACONIC_ENFORCE(!v.empty(), "quantile of no samples");
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
}

}  // namespace laconic::bench
