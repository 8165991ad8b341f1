// laconic-engine puts libstdc++ first where LibTorch's copies of its functions would win
// (cli/libstdcxx_first.hpp): the decision, and a run with a library preloaded that exports a copy of
// std::filesystem::remove_all that aborts (stdcxx_copy.cpp), as PyTorch's wheel exports its own.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>

#include "cli/libstdcxx_first.hpp"

#include "cli_harness.hpp"

using laconic::cli::libstdcxx_preload;

TEST_CASE("libstdc++ is preloaded only when its function resolved into another library", "[cli][torch]") {
  const std::string stdcxx = "/lib/x86_64-linux-gnu/libstdc++.so.6";
  const std::string torch = "/opt/torch/lib/libtorch.so";
  CHECK(libstdcxx_preload(torch, stdcxx, nullptr) == stdcxx);
  CHECK(libstdcxx_preload(torch, stdcxx, "/opt/x.so") == stdcxx + ":/opt/x.so");  // kept, after it
  CHECK(libstdcxx_preload(stdcxx, stdcxx, nullptr).empty());                      // resolved where it belongs
  CHECK(libstdcxx_preload(torch, stdcxx, stdcxx.c_str()).empty());                // the second start: no loop
  CHECK(libstdcxx_preload(torch, "", nullptr).empty());                           // libstdc++ not found
  CHECK(libstdcxx_preload("/usr/bin/laconic-engine", stdcxx, nullptr).empty());   // the program itself
}

TEST_CASE("a run trains where a preloaded library exports a copy of a libstdc++ function", "[cli][torch]") {
  const std::string dir = laconic::testing::make_temp_dir();
  laconic::testing::write_file(
      dir + "/tiny.lua",
      "experiment { name = \"tiny\", data = synthetic { shape = {1, 4, 4}, n = 64, test_n = 16 },\n"
      "  model = mlp { sizes = {16, 10} }, optimizer = sgd { lr = 0.1 }, batch_size = 16,\n"
      "  workers = 2, max_steps = 2, eval_limit = 16, timeout = 30 }\n");
  ::setenv("LD_PRELOAD", LACONIC_STDCXX_COPY, 1);
  const auto run = laconic::testing::run_laconic(dir, "run tiny.lua --db t.db --quiet", 120);
  ::unsetenv("LD_PRELOAD");
  INFO(run.out << run.err);
  CHECK(run.status == 0);
  CHECK(run.err.find("a copy of std::filesystem::remove_all was called") == std::string::npos);
  std::filesystem::remove_all(dir);
}
