#include "engine/core/catalog.hpp"

#include "engine/core/error.hpp"

namespace laconic {

ComponentSpec Catalog::combine(const std::string& kind, const std::vector<ComponentSpec>& /*parts*/) const {
  throw ConfigError(str_cat("a ", kind, " is one component, not a list of them"));
}

}  // namespace laconic
