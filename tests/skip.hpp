#pragma once
// A test case that cannot run on this machine says so, and ctest lists it as skipped rather than
// passed: LACONIC_SKIP(reason) warns "SKIPPED: reason" and returns from the test case, and the test
// program (tests/main.cpp) then exits 77, ctest's SKIP_RETURN_CODE, when nothing failed. A test
// case that may skip carries a [needs-WHAT] tag (root, gnuplot, chromium, f16c, pytorch, perldoc) and runs in a ctest entry
// of its own, NAME_needs_WHAT (tests/CMakeLists.txt, laconic_add_test's NEEDS), so that a skip
// there never hides the other cases' passes.
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

namespace laconic_test_skips {

/// Counts a skipped test case; tests/main.cpp exits 77 when any was and nothing failed.
void note_skipped(const std::string& why);

}  // namespace laconic_test_skips

#define LACONIC_SKIP(reason)                            \
  do {                                                  \
    std::ostringstream laconic_skip_why_;               \
    laconic_skip_why_ << reason;                        \
    WARN("SKIPPED: " << laconic_skip_why_.str());       \
    ::laconic_test_skips::note_skipped(laconic_skip_why_.str()); \
    return;                                             \
  } while (0)

// The same for a part of a test case that cannot run here, the rest of which goes on: the case
// still counts as skipped, since not all of it ran.
#define LACONIC_SKIP_PART(reason)                       \
  do {                                                  \
    std::ostringstream laconic_skip_why_;               \
    laconic_skip_why_ << reason;                        \
    WARN("SKIPPED (part): " << laconic_skip_why_.str()); \
    ::laconic_test_skips::note_skipped(laconic_skip_why_.str()); \
  } while (0)
