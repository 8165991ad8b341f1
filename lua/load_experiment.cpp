#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "engine/core/error.hpp"
#include "lua/constructors.hpp"
#include "lua/context.hpp"
#include "lua/experiment.hpp"
#include "lua/experiment_table.hpp"
#include "lua/hash.hpp"
#include "lua/state.hpp"
#include "lua/sweep.hpp"

namespace laconic::lua {

namespace {

std::string read_file(const std::string& path) {
  struct Closer {
    void operator()(std::FILE* file) const { std::fclose(file); }
  };
  std::unique_ptr<std::FILE, Closer> file(std::fopen(path.c_str(), "rb"));
  if (!file)
    throw ConfigError(str_cat("cannot open experiment file '", path, "': ", std::strerror(errno)));
  std::string bytes;
  char buffer[1 << 16];
  std::size_t got = 0;
  while ((got = std::fread(buffer, 1, sizeof buffer, file.get())) > 0) bytes.append(buffer, got);
  if (std::ferror(file.get()))
    throw ConfigError(str_cat("cannot read experiment file '", path, "': ", std::strerror(errno)));
  return bytes;
}

}  // namespace

ExperimentPlan load_experiment(const std::string& path, const Catalog& catalog,
                               const LoadOptions& options) {
  ExperimentPlan plan;
  plan.file = path;
  const std::string text = read_file(path);
  plan.file_hash = fnv1a_hex(text);

  LoadContext context(catalog);
  SandboxedState state(options.instruction_limit, options.memory_limit);
  install_constructors(state, context);
  install_experiment(state, context);
  state.run_file(text, path);
  if (!context.draft)
    throw ConfigError(str_cat(path, ": the file never calls experiment { ... }"));
  plan.name = context.draft->name;
  plan.runs = expand_sweeps(*context.draft, catalog);
  return plan;
}

}  // namespace laconic::lua
