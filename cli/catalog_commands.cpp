#include "cli/catalog_commands.hpp"

#include <iostream>

#include "engine/catalog.hpp"
#include "lua/experiment.hpp"

namespace laconic::cli {

int list_command(const std::string& kind) {
  engine::EngineCatalog catalog;
  auto kinds = kind.empty() ? catalog.kinds() : std::vector<std::string>{kind};
  for (const auto& k : kinds) {
    std::cout << (k.back() == 'y' ? k.substr(0, k.size() - 1) + "ies" : k + "s") << ":\n";
    for (const auto& info : catalog.infos(k)) {
      std::cout << "  " << info.name << " - " << info.description << "\n";
      for (const auto& f : info.fields)
        std::cout << "      " << f.name << " (" << field_type_name(f.type)
                  << ", default " << format_value(f.default_value) << "): " << f.doc << "\n";
    }
  }
  return 0;
}

int check_command(const std::string& file) {
  engine::EngineCatalog catalog;
  auto plan = lua::load_experiment(file, catalog);
  std::cout << plan.name << " (" << file << ", hash " << plan.file_hash << "): "
            << plan.runs.size() << " runs\n";
  for (std::size_t i = 0; i < plan.runs.size(); ++i)
    std::cout << "  " << i + 1 << ". " << plan.runs[i].name << "\n      "
              << plan.runs[i].to_json().dump() << "\n";
  return 0;
}

}  // namespace laconic::cli
