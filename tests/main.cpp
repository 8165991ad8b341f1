// Catch2's runner, with skips that ctest can see (tests/skip.hpp): exit 77 when a test case said
// it could not run here and nothing failed.
#define CATCH_CONFIG_RUNNER
#include <atomic>
#include <iostream>

#include <catch2/catch.hpp>

#include "skip.hpp"

namespace {

// The ctest property SKIP_RETURN_CODE of every entry that runs [needs-...] cases (tests/CMakeLists.txt).
constexpr int kSkipped = 77;
std::atomic<int> g_skipped{0};

}  // namespace

void laconic_test_skips::note_skipped(const std::string&) { ++g_skipped; }

int main(int argc, char* argv[]) {
  const int failed = Catch::Session().run(argc, argv);
  if (failed != 0 || g_skipped == 0) return failed;
  std::cout << g_skipped << " test case(s) skipped on this machine (the SKIPPED warnings above say why)\n";
  return kSkipped;
}
