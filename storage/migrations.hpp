#pragma once
// Versioned schema migrations. Version N is reached by applying migrations 1..N in order, in one
// transaction that also records each in schema_version. Append new migrations; never edit
// one that has shipped. docs/schema.md describes the resulting tables.
#include <string>
#include <vector>

struct sqlite3;

namespace laconic::storage {

/// One step of the schema: the SQL that takes version - 1 to version.
struct Migration {
  int version;
  std::string description;
  std::string sql;
};

/// All migrations, in order of version (1, 2, ...).
const std::vector<Migration>& migrations();

/// The newest schema version this laconic knows.
int latest_schema_version();

/// The version recorded in schema_version; 0 for an empty database. `path` is for messages.
/// A database with tables but no schema_version is a StorageError (not a laconic database).
int read_schema_version(sqlite3* db, const std::string& path);

/// Throws StorageError "database X has schema version N; this laconic knows up to M; upgrade
/// laconic" when `version` is newer than latest_schema_version().
void refuse_newer(int version, const std::string& path);

/// Brings the database to version `target` (latest_schema_version() when negative) in one
/// transaction; returns the version it ends at. A database already at or past `target` is left
/// alone (tests build a database of an old schema with a lower target).
int migrate(sqlite3* db, const std::string& path, int target = -1);

}  // namespace laconic::storage
