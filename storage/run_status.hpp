#pragma once
// The life cycle of a run as stored in runs.status.
#include <ostream>
#include <string>

namespace laconic::storage {

/// QUEUED -> RUNNING -> one of FINISHED / FAILED / KILLED / DIVERGED.
enum class RunStatus { Queued, Running, Finished, Failed, Killed, Diverged };

/// Every status, in the order of the life cycle.
inline constexpr RunStatus kRunStatuses[] = {RunStatus::Queued,   RunStatus::Running, RunStatus::Finished,
                                             RunStatus::Failed,   RunStatus::Killed,  RunStatus::Diverged};

/// The text stored in runs.status: "QUEUED", "RUNNING", "FINISHED", "FAILED", "KILLED", "DIVERGED".
std::string to_string(RunStatus status);

/// Inverse of to_string(), in any case ("finished" too); an unknown text is a ConfigError naming
/// it and listing the valid ones.
RunStatus run_status_from_string(const std::string& text);

/// Writes to_string(status): test failures and messages show "FINISHED".
inline std::ostream& operator<<(std::ostream& out, RunStatus status) { return out << to_string(status); }

/// True for the statuses a run ends in (everything but QUEUED and RUNNING).
bool is_final(RunStatus status);

}  // namespace laconic::storage
