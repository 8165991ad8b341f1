#include "cli/catalog_commands.hpp"

#include <filesystem>
#include <iostream>
#include <set>

#include <nlohmann/json.hpp>

#include "controller/run_selection.hpp"
#include "engine/catalog.hpp"
#include "engine/core/error.hpp"
#include "lua/experiment.hpp"
#include "storage/database.hpp"
#include "storage/queries.hpp"

namespace laconic::cli {

namespace {

// "int or function(epoch, step)"; a nested component of another kind by that kind ("optimizer").
std::string field_type_text(const FieldSpec& f) {
  return str_cat(f.component_kind.empty() ? field_type_name(f.type) : f.component_kind.c_str(),
                 f.per_step ? " or function(epoch, step)" : "");
}

}  // namespace

int list_command(const std::string& kind) {
  engine::EngineCatalog catalog;
  auto kinds = kind.empty() ? catalog.kinds() : std::vector<std::string>{kind};
  for (const auto& k : kinds) {
    // "models:", "lr_schedules:", "hardware:" (no plural)
    std::cout << (k == "hardware" ? k : k.back() == 'y' ? k.substr(0, k.size() - 1) + "ies" : k + "s") << ":\n";
    for (const auto& info : catalog.infos(k)) {
      std::cout << "  " << info.name << " - " << info.description << "\n";
      for (const auto& f : info.fields)
        std::cout << "      " << f.name << " (" << field_type_text(f) << ", default " << format_value(f.default_value)
                  << "): " << f.doc << "\n";
    }
  }
  return 0;
}

namespace {

// The runs of `experiment` FINISHED in `db_path` with the configuration each would train with
// (what `laconic run --resume --db` skips), by name; nothing when the file does not exist.
std::set<std::string> finished_in(const std::string& db_path, const std::string& experiment,
                                  const std::vector<RunConfig>& runs) {
  std::set<std::string> out;
  if (db_path.empty() || !std::filesystem::exists(db_path)) return out;
  auto db = storage::Database::open_read_only(db_path);
  for (const RunConfig& run : runs)
    if (storage::find_finished_run(*db, experiment, run.to_json().dump())) out.insert(run.name);
  return out;
}

}  // namespace

int check_command(const std::string& file, const std::string& only, CheckListing listing,
                  const std::vector<std::string>& overrides, const std::string& db_path) {
  engine::EngineCatalog catalog;
  lua::LoadOptions options;
  options.overrides = overrides;
  auto plan = lua::load_experiment(file, catalog, options);
  const auto selected = controller::select_runs(plan, file, only);
  controller::check_runs(catalog, plan, selected);
  if (listing == CheckListing::Names) {
    for (std::size_t i : selected) std::cout << plan.runs[i].name << "\n";
    return 0;
  }
  if (listing == CheckListing::Json) {
    nlohmann::json runs = nlohmann::json::array();
    for (std::size_t i : selected)
      runs.push_back({{"index", i + 1}, {"name", plan.runs[i].name}, {"config", plan.runs[i].to_json()}});
    std::cout << runs.dump(2) << "\n";
    return 0;
  }
  std::cout << plan.name << " (" << file << ", hash " << plan.file_hash << "): " << plan.runs.size() << " runs";
  if (plan.skipped > 0) std::cout << " (where(run) skipped " << plan.skipped << ")";
  if (!only.empty()) std::cout << ", " << selected.size() << " matching '" << only << "'";
  std::cout << "\n";
  if (!plan.callbacks.empty()) {
    std::cout << "  functions run in the workers:";
    for (const auto& name : plan.callbacks) std::cout << " " << name;
    std::cout << "\n";
  }
  const std::set<std::string> finished = finished_in(db_path, plan.name, plan.runs);
  if (!db_path.empty())
    std::cout << "  " << db_path
              << (std::filesystem::exists(db_path)
                      ? str_cat(" holds ", finished.size(), " of them FINISHED with this configuration (laconic run "
                                "--resume skips those)")
                      : std::string(" does not exist yet: every run would train"))
              << "\n";
  for (std::size_t i : selected) {
    const RunConfig& run = plan.runs[i];
    const int world = catalog.world_size(run);
    std::cout << "  " << i + 1 << ". " << run.name << "  (" << run.workers << " workers"
              << (world > run.workers ? str_cat(" + ", world - run.workers, " servers") : std::string()) << ", "
              << run.epochs << (run.epochs == 1 ? " epoch" : " epochs")
              << (run.max_steps > 0 ? str_cat(" of at most ", run.max_steps, " steps (max_steps)") : std::string())
              << ")" << (finished.count(run.name) ? "  FINISHED in " + db_path : "") << "\n";
  }
  std::cout << "  (--json prints each run's resolved configuration, --names the names only)\n";
  return 0;
}

namespace {

/// A cell of a Markdown table: pipes escaped.
std::string cell(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

}  // namespace

int list_markdown_command() {
  engine::EngineCatalog catalog;
  for (const auto& kind : catalog.kinds()) {
    std::cout << "### " << kind << "\n\n";
    for (const auto& info : catalog.infos(kind)) {
      std::cout << "#### `" << info.name << "`\n\n" << cell(info.description) << "\n\n";
      if (info.fields.empty()) {
        std::cout << "No fields: `" << info.name << "()`.\n\n";
        continue;
      }
      std::cout << "| field | type | default | meaning |\n|---|---|---|---|\n";
      for (const auto& f : info.fields)
        std::cout << "| `" << f.name << "` | " << field_type_text(f) << " | `" << cell(format_value(f.default_value))
                  << "` | " << cell(f.doc) << " |\n";
      std::cout << "\n";
    }
  }
  return 0;
}

}  // namespace laconic::cli
