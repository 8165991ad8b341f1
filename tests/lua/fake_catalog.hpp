#pragma once
// A small catalog standing in for the engine's registries in the Lua tests.
#include <map>
#include <string>
#include <vector>

#include "engine/core/catalog.hpp"
#include "lua/experiment.hpp"

namespace laconic::lua::testing {

/// dataset fashion_mnist, model lenet5, optimizer sgd{lr, momentum}, topology
/// allreduce{algorithm}, schedule synchronous, compressor none and topk{ratio, error_feedback}.
class FakeCatalog : public Catalog {
 public:
  FakeCatalog();
  /// Adds an entry (to test duplicate names); kind need not exist yet.
  void add(ComponentInfo info);

  std::vector<std::string> kinds() const override;
  std::vector<ComponentInfo> infos(const std::string& kind) const override;
  ComponentSpec resolve(const ComponentSpec& spec) const override;

 private:
  std::vector<std::string> kinds_;
  std::map<std::string, std::vector<ComponentInfo>> infos_;
};

/// A fresh directory under the system temp dir, removed with everything in it at the end.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  /// Writes `text` to `name` inside the directory; returns the file's path.
  std::string write(const std::string& name, const std::string& text) const;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// The message of the ConfigError that loading `path` raises ("" when it loads fine).
std::string load_error(const std::string& path, const Catalog& catalog, const LoadOptions& options = {});

}  // namespace laconic::lua::testing
