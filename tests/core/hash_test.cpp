#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

#include "engine/core/hash.hpp"

using laconic::Fnv1a;
using laconic::fnv1a_hex;

TEST_CASE("fnv1a_hex gives FNV-1a 64's published test vectors", "[core][hash]") {
  // From the FNV reference test suite (Fowler, Noll, Vo).
  CHECK(fnv1a_hex("") == "cbf29ce484222325");
  CHECK(fnv1a_hex("a") == "af63dc4c8601ec8c");
  CHECK(fnv1a_hex("foobar") == "85944171f73967e8");
}

TEST_CASE("a hash fed piece by piece is the hash of the pieces together", "[core][hash]") {
  const std::string whole = "laconic: a testbed for communication-efficient training";
  for (std::size_t cut = 0; cut <= whole.size(); cut += 7) {
    Fnv1a pieces;
    pieces.add(whole.substr(0, cut)).add(whole.substr(cut));
    CHECK(pieces.hex() == fnv1a_hex(whole));
  }
  const double values[] = {1.5, -2.25};
  Fnv1a raw;
  raw.add(values, sizeof values);
  CHECK(raw.value() == Fnv1a().add(std::string(reinterpret_cast<const char*>(values), sizeof values)).value());
}

TEST_CASE("the truncated start reproduces the fingerprints written before the one hasher", "[core][hash]") {
  // The loop that checkpoints' configuration fingerprints and journals' names were made with,
  // written out as it was: files on disk carry its values.
  const auto before = [](const std::string& text) {
    std::uint64_t h = 1469598103934665603ull;
    for (const char c : text) h = (h ^ static_cast<std::uint8_t>(c)) * 1099511628211ull;
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    return std::string(buf);
  };
  for (const std::string text : {"", "/home/me/runs/laconic.db", R"({"epochs":2,"workers":4})"})
    CHECK(Fnv1a(Fnv1a::kTruncatedBasis).add(text).hex() == before(text));
  CHECK(Fnv1a::kTruncatedBasis != Fnv1a::kOffsetBasis);
}
