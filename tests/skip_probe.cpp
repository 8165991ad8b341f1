// The runner's own check (tests/main.cpp, tests/skip.hpp): a program whose cases skip, pass and
// fail on demand, for the ctest entries in tests/CMakeLists.txt that hold its exit statuses: 77
// when a case skipped and none failed, a failure's status when one failed too, 0 when all passed.
#include <catch2/catch.hpp>

#include "skip.hpp"

TEST_CASE("a case that cannot run here", "[probe-skip]") { LACONIC_SKIP("the probe's own skip"); }

TEST_CASE("a case that runs in part", "[probe-skip-part]") {
  LACONIC_SKIP_PART("the probe's part that cannot run");
  CHECK(1 + 1 == 2);
}

TEST_CASE("a case that passes", "[probe-pass]") { CHECK(2 * 2 == 4); }

TEST_CASE("a case that fails", "[probe-fail]") { CHECK(2 * 2 == 5); }
