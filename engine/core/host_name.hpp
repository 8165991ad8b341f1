#pragma once
// This host's name, as gethostname(2) says it: what runs, relays and checks of a controller's
// liveness compare.
#include <string>

namespace laconic {

/// gethostname(2)'s answer, or "" when it fails.
std::string host_name();

}  // namespace laconic
