#pragma once
// "Did you mean": the known name closest to one that was mistyped, for error messages about
// Lua globals, metric keys and the like.
#include <cstddef>
#include <string>
#include <vector>

namespace laconic {

/// Edit distance (insertions, deletions, substitutions) of two names, ignoring case.
std::size_t name_distance(const std::string& a, const std::string& b);

/// The candidate `name` most likely meant, or "" when none is close: a candidate that starts
/// with `name` when `name` has 3 or more characters (the shortest such: "test_acc" ->
/// "test_accuracy"), else the one within edit distance 2 (3 for names of 9 characters or more)
/// with the smallest distance. Ties keep the first candidate. `name` itself is not suggested.
std::string closest_name(const std::string& name, const std::vector<std::string>& candidates);

}  // namespace laconic
