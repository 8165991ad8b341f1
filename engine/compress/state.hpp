#pragma once
// The compressors' name for the state reader and writer of engine/core/state_io.hpp.
#include "engine/core/state_io.hpp"

namespace laconic::compress {

using ::laconic::StateReader;
using ::laconic::StateWriter;

}  // namespace laconic::compress
