#pragma once
#include "engine/compress/compressor.hpp"
#include "engine/core/registry.hpp"

namespace laconic::compress {

/// Every built-in compressor, one registration line each (engine/compress/builtin.cpp).
Registry<Compressor> builtin_compressors();

}  // namespace laconic::compress
