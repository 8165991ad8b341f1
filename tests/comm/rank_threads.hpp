#pragma once
// Runs one thread per rank, each with its own GlooCommunicator over a FileStore in a fresh
// temporary directory (Gloo's own tests do the same with an in-memory store).
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "engine/comm/gloo_communicator.hpp"

namespace laconic::testing {

inline std::string make_temp_dir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "laconic-test-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  return pattern;
}

/// Calls fn(comm) on `size` ranks concurrently, then (with `final_barrier`) a barrier so that no
/// rank tears its connections down while a peer is still finishing its handshake; rethrows the
/// first exception any rank threw. `configure` may change each rank's options first.
inline void run_ranks(int size, std::chrono::milliseconds timeout, const std::function<void(comm::Communicator&)>& fn,
                      bool final_barrier = true, const std::function<void(comm::GlooOptions&)>& configure = {}) {
  const std::string dir = make_temp_dir();
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(size));
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r)
    threads.emplace_back([&, r] {
      try {
        comm::GlooOptions options;
        options.rank = r;
        options.size = size;
        options.store_dir = dir;
        options.timeout = timeout;
        if (configure) configure(options);
        comm::GlooCommunicator comm(options);
        fn(comm);
        if (final_barrier) comm.barrier();
      } catch (...) {
        errors[static_cast<std::size_t>(r)] = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  std::filesystem::remove_all(dir);
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace laconic::testing
