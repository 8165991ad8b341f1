#include "storage/run_status.hpp"

#include <array>
#include <cctype>
#include <utility>

#include "engine/core/error.hpp"

namespace laconic::storage {
namespace {

constexpr std::array<std::pair<RunStatus, const char*>, 6> kStatusNames{{
    {RunStatus::Queued, "QUEUED"},
    {RunStatus::Running, "RUNNING"},
    {RunStatus::Finished, "FINISHED"},
    {RunStatus::Failed, "FAILED"},
    {RunStatus::Killed, "KILLED"},
    {RunStatus::Diverged, "DIVERGED"},
}};

}  // namespace

std::string to_string(RunStatus status) {
  for (const auto& [value, name] : kStatusNames)
    if (value == status) return name;
  throw InvariantError(str_cat("unknown RunStatus value ", static_cast<int>(status)));
}

RunStatus run_status_from_string(const std::string& text) {
  std::string upper = text;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const auto& [value, name] : kStatusNames)
    if (upper == name) return value;
  std::string known;
  for (const auto& entry : kStatusNames) known += (known.empty() ? "" : ", ") + std::string(entry.second);
  throw ConfigError(str_cat("unknown run status '", text, "'; known: ", known));
}

bool is_final(RunStatus status) { return status != RunStatus::Queued && status != RunStatus::Running; }

}  // namespace laconic::storage
