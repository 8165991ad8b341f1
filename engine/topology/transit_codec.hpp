#pragma once
// The wire codecs of the formats an allreduce sums payloads in as they travel (fp16, bf16:
// compress::TransitFormat), for Communicator::allreduce_sum_encoded.
#include "engine/comm/wire_codec.hpp"
#include "engine/compress/compressor.hpp"

namespace laconic::topology {

/// The codec of `format` (two bytes an element for fp16 and bf16, no header), or nullptr for
/// TransitFormat::None. The codecs hold no state: one instance each serves every caller.
const comm::WireCodec* transit_codec(compress::TransitFormat format);

}  // namespace laconic::topology
