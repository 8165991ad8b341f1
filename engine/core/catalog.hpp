#pragma once
// A read-only view over every registry, so that layers above the engine (the Lua DSL, the CLI's
// `list`) can describe and validate components without knowing their C++ types.
#include <string>
#include <vector>

#include "engine/core/component.hpp"

namespace laconic {

class Catalog {
 public:
  virtual ~Catalog() = default;
  /// The component kinds, in a stable order: "dataset", "model", ...
  virtual std::vector<std::string> kinds() const = 0;
  /// The entries of one kind, sorted by name.
  virtual std::vector<ComponentInfo> infos(const std::string& kind) const = 0;
  /// Checks and completes a spec of any kind (ConfigError on unknown names or bad values).
  virtual ComponentSpec resolve(const ComponentSpec& spec) const = 0;
  /// A list of components where a field takes one (`churn = { leave { ... }, join { ... } }`) made
  /// into the one component it stands for; ConfigError where the kind takes no list.
  virtual ComponentSpec combine(const std::string& kind, const std::vector<ComponentSpec>& parts) const;
};

}  // namespace laconic
