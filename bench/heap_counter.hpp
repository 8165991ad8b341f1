#pragma once
// Counts heap bytes allocated through operator new in this process (the bench replaces the
// global operator new/delete), so a benchmark can report a compressor's peak extra memory.
#include <cstddef>

namespace laconic::bench {

/// Bytes currently allocated through operator new.
std::size_t heap_live_bytes();
/// Highest heap_live_bytes() since the last reset_heap_peak().
std::size_t heap_peak_bytes();
/// Starts a new peak measurement from the current live bytes.
void reset_heap_peak();

}  // namespace laconic::bench
