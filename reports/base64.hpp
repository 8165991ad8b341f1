#pragma once
// Base64 (RFC 4648, standard alphabet, '=' padding) for the PNGs index.html embeds as data URIs.
#include <string>
#include <string_view>

namespace laconic::reports {

/// base64("foobar") == "Zm9vYmFy"; base64("f") == "Zg==".
std::string base64(std::string_view bytes);

}  // namespace laconic::reports
