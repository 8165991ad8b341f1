#include "storage/annotations.hpp"
#include <sqlite3.h>

#include "engine/core/error.hpp"
#include "storage/queries.hpp"
#include "storage/statement.hpp"

namespace laconic::storage {
namespace {

void check_tag(const std::string& tag) {
  const auto allowed = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
           c == '.' || c == ':' || c == '+' || c == '/';
  };
  bool ok = !tag.empty();
  for (char c : tag) ok = ok && allowed(c);
  if (!ok)
    throw ConfigError(str_cat("tag '", tag,
                              "' must be a word of letters, digits and - _ . : + / (no spaces or commas: "
                              "run_results lists tags joined by commas)"));
}

void require_runs(Database& db, const std::vector<std::int64_t>& runs) {
  for (std::int64_t run : runs) require_run(db, run);  // names the ids that exist
}

}  // namespace

void add_tag(Database& db, const std::vector<std::int64_t>& runs, const std::string& tag) {
  check_tag(tag);
  require_runs(db, runs);
  Transaction transaction(db.handle());
  Statement insert(db.handle(), "INSERT OR IGNORE INTO run_tags (run_id, tag, added) VALUES (?1, ?2, ?3)");
  for (std::int64_t run : runs) {
    insert.reset();
    insert.bind_int64(1, run).bind_text(2, tag).bind_double(3, unix_now());
    insert.run();
  }
  transaction.commit();
}

std::int64_t remove_tag(Database& db, const std::vector<std::int64_t>& runs, const std::string& tag) {
  require_runs(db, runs);
  Transaction transaction(db.handle());
  Statement remove(db.handle(), "DELETE FROM run_tags WHERE run_id = ?1 AND tag = ?2");
  std::int64_t removed = 0;
  for (std::int64_t run : runs) {
    remove.reset();
    remove.bind_int64(1, run).bind_text(2, tag);
    remove.run();
    removed += sqlite3_changes(db.handle());
  }
  transaction.commit();
  return removed;
}

void set_note(Database& db, std::int64_t run, const std::string& note) {
  require_run(db, run);
  Statement update(db.handle(), "UPDATE runs SET note = ?2 WHERE id = ?1");
  update.bind_int64(1, run);
  if (note.empty())
    update.bind_null(2);
  else
    update.bind_text(2, note);
  update.run();
}

std::vector<std::string> tags_of(Database& db, std::int64_t run) {
  Statement query(db.handle(), "SELECT tag FROM run_tags WHERE run_id = ?1 ORDER BY tag");
  query.bind_int64(1, run);
  std::vector<std::string> tags;
  while (query.step()) tags.push_back(query.column_text(0));
  return tags;
}

std::vector<std::pair<std::string, std::int64_t>> tags_in_use(Database& db) {
  Statement query(db.handle(), "SELECT tag, count(*) FROM run_tags GROUP BY tag ORDER BY tag");
  std::vector<std::pair<std::string, std::int64_t>> tags;
  while (query.step()) tags.emplace_back(query.column_text(0), query.column_int64(1));
  return tags;
}

}  // namespace laconic::storage
