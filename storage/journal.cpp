#include "storage/journal.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include <sqlite3.h>

#include "engine/core/error.hpp"
#include "engine/core/hash.hpp"
#include "engine/core/worker_message.hpp"
#include "storage/sqlite_sink.hpp"
#include "storage/statement.hpp"

namespace laconic::storage {
namespace {

namespace fs = std::filesystem;

constexpr const char* kMagic = "laconic-journal";
constexpr int kFormat = 1;

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const auto tab = line.find('\t', start);
    parts.push_back(line.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
    if (tab == std::string::npos) break;
    start = tab + 1;
  }
  return parts;
}

std::string number(double value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", value);
  return buf;
}

// 16 hex digits: a short, stable name for a database's absolute path. The old start, so that
// journals written before are still found.
std::string path_hash(const std::string& database) {
  std::error_code error;
  const std::string absolute = fs::absolute(database, error).lexically_normal().string();
  return Fnv1a(Fnv1a::kTruncatedBasis).add(absolute).hex();
}

std::string tmp_prefix(const std::string& database) { return str_cat("laconic-journal-", path_hash(database), "-"); }

std::string encode(const Journal& journal) {
  std::string out = str_cat(kMagic, "\t", kFormat, "\t", journal.id, "\t", escape_field(journal.database), "\n");
  std::size_t lines = 0;
  for (const auto& rows : journal.metrics)
    for (const auto& record : rows.records) {
      // "M\t<run>\t" then the worker protocol's metric line without its own "M\t".
      out += str_cat("M\t", rows.run_id, "\t", encode_message(record).substr(2));
      ++lines;
    }
  for (const auto& s : journal.statuses) {
    out += str_cat("S\t", s.run_id, "\t", s.status, "\t", number(s.ended), "\t", escape_field(s.error), "\n");
    ++lines;
  }
  for (const auto& f : journal.facts) {
    out += str_cat("F\t", f.run_id, "\t", escape_field(f.key), "\t", escape_field(f.value), "\n");
    ++lines;
  }
  // The count at the end tells a whole journal from one cut short.
  return out + str_cat("END\t", lines, "\n");
}

// Writes `text` to `path` through a temporary file; "" on success, else why not.
std::string write_atomically(const fs::path& path, const std::string& text) {
  const std::string temporary = path.string() + ".tmp";
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return str_cat(temporary, ": ", std::strerror(errno));
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = n < 0 ? errno : ENOSPC;
      ::close(fd);
      ::unlink(temporary.c_str());
      return str_cat(temporary, ": ", std::strerror(error));
    }
    written += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    return str_cat(temporary, ": ", std::strerror(error));
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    return str_cat(path.string(), ": ", std::strerror(error));
  }
  return "";
}

std::int64_t to_int(const std::string& text, const std::string& path, std::size_t line) {
  try {
    std::size_t used = 0;
    const std::int64_t value = std::stoll(text, &used);
    if (used == text.size()) return value;
  } catch (const std::exception&) {}
  throw ConfigError(str_cat("journal ", path, " line ", line, ": '", text, "' is not a number"));
}

}  // namespace

std::size_t Journal::rows() const {
  std::size_t n = 0;
  for (const auto& r : metrics) n += r.records.size();
  return n;
}

Journal new_journal(const std::string& database) {
  Journal journal;
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  journal.id = str_cat(std::chrono::duration_cast<std::chrono::milliseconds>(now).count(), "-", ::getpid());
  // Absolute, so that the journal replays into the same file from any directory.
  std::error_code error;
  const fs::path absolute = fs::absolute(database, error).lexically_normal();
  journal.database = error ? database : absolute.string();
  return journal;
}

std::string write_journal(const Journal& journal) {
  const std::string text = encode(journal);
  const fs::path beside = journal.database + ".journal-" + journal.id;
  const std::string why_beside = write_atomically(beside, text);
  if (why_beside.empty()) return beside.string();
  const fs::path in_tmp = fs::temp_directory_path() / (tmp_prefix(journal.database) + journal.id);
  const std::string why_tmp = write_atomically(in_tmp, text);
  if (why_tmp.empty()) return in_tmp.string();
  throw StorageError(str_cat("cannot write the recovery journal of ", journal.database, " (", journal.rows(),
                             " metric rows, ", journal.statuses.size(), " statuses): ", why_beside, "; ", why_tmp),
                     -1);
}

Journal read_journal(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(str_cat("cannot read journal ", path, ": ", std::strerror(errno)));
  Journal journal;
  std::string line;
  std::size_t number_of_line = 0, lines = 0;
  bool ended = false;
  std::optional<std::int64_t> current_run;
  while (std::getline(in, line)) {
    ++number_of_line;
    const auto parts = split_tabs(line);
    if (number_of_line == 1) {
      if (parts.size() != 4 || parts[0] != kMagic || parts[1] != std::to_string(kFormat))
        throw ConfigError(str_cat(path, " is not a laconic recovery journal (format ", kFormat, ")"));
      journal.id = parts[2];
      journal.database = unescape_field(parts[3]);
      continue;
    }
    if (ended) throw ConfigError(str_cat("journal ", path, " line ", number_of_line, ": text after its end"));
    if (parts[0] == "END" && parts.size() == 2) {
      if (to_int(parts[1], path, number_of_line) != static_cast<std::int64_t>(lines))
        throw ConfigError(str_cat("journal ", path, " is damaged: it says ", parts[1], " lines, it holds ", lines));
      ended = true;
      continue;
    }
    ++lines;
    if (parts[0] == "M" && parts.size() == 8) {
      const std::int64_t run = to_int(parts[1], path, number_of_line);
      std::string metric = "M";
      for (std::size_t i = 2; i < parts.size(); ++i) metric += "\t" + parts[i];
      const auto message = decode_message(metric);
      if (!message) throw ConfigError(str_cat("journal ", path, " line ", number_of_line, ": a malformed metric row"));
      if (!current_run || *current_run != run) {
        journal.metrics.push_back({run, {}});
        current_run = run;
      }
      journal.metrics.back().records.push_back(std::get<MetricRecord>(*message));
    } else if (parts[0] == "S" && parts.size() == 5) {
      journal.statuses.push_back({to_int(parts[1], path, number_of_line), parts[2],
                                  std::strtod(parts[3].c_str(), nullptr), unescape_field(parts[4])});
    } else if (parts[0] == "F" && parts.size() == 4) {
      journal.facts.push_back(
          {to_int(parts[1], path, number_of_line), unescape_field(parts[2]), unescape_field(parts[3])});
    } else {
      throw ConfigError(str_cat("journal ", path, " line ", number_of_line, ": not a journal line"));
    }
  }
  if (number_of_line == 0) throw ConfigError(str_cat("journal ", path, " is empty"));
  if (!ended) throw ConfigError(str_cat("journal ", path, " is cut short (no END line): it was not written whole"));
  return journal;
}

std::size_t replay_journal(Database& db, const Journal& journal, const std::string& path) {
  {
    Statement seen(db.handle(), "SELECT path, replayed FROM replayed_journals WHERE journal_id = ?1");
    seen.bind_text(1, journal.id);
    if (seen.step())
      throw ConfigError(str_cat("journal ", path, " (id ", journal.id, ") was already replayed into ", db.path(),
                                " from ", seen.column_text(0), "; nothing to do"));
  }
  std::vector<std::int64_t> runs;
  for (const auto& r : journal.metrics) runs.push_back(r.run_id);
  for (const auto& s : journal.statuses) runs.push_back(s.run_id);
  for (const auto& f : journal.facts) runs.push_back(f.run_id);
  {
    Statement exists(db.handle(), "SELECT 1 FROM runs WHERE id = ?1");
    for (const auto run : runs) {
      exists.reset();
      exists.bind_int64(1, run);
      if (!exists.step())
        throw ConfigError(str_cat("journal ", path, " names run ", run, ", which ", db.path(),
                                  " does not hold; give the database it belongs to: --db ", journal.database));
      exists.reset();
    }
  }
  // One transaction for everything: a replay that fails half way leaves nothing behind, and its
  // id goes in with its rows, so it can never be replayed twice.
  Transaction transaction(db.handle());
  std::size_t rows = 0;
  for (const auto& r : journal.metrics) {
    SqliteSink sink(db, r.run_id, r.records.size() + 1);
    for (const auto& record : r.records) sink.record(record);
    sink.write_in_open_transaction();
    rows += r.records.size();
  }
  Statement status(db.handle(),
                   "UPDATE runs SET status = ?2, ended = ?3, heartbeat = ?3, error = ?4, "
                   "workers_silent = NULL WHERE id = ?1");
  for (const auto& s : journal.statuses) {
    status.reset();
    status.bind_int64(1, s.run_id).bind_text(2, s.status).bind_double(3, s.ended);
    if (s.error.empty())
      status.bind_null(4);
    else
      status.bind_text(4, s.error);
    status.run();
  }
  Statement fact(db.handle(), "INSERT OR REPLACE INTO run_facts (run_id, key, value) VALUES (?1, ?2, ?3)");
  for (const auto& f : journal.facts) {
    fact.reset();
    fact.bind_int64(1, f.run_id).bind_text(2, f.key).bind_text(3, f.value);
    fact.run();
  }
  Statement mark(db.handle(),
                 "INSERT INTO replayed_journals (journal_id, path, replayed, rows) VALUES (?1, ?2, ?3, ?4)");
  mark.bind_text(1, journal.id).bind_text(2, path).bind_double(3, unix_now());
  mark.bind_int64(4, static_cast<std::int64_t>(rows));
  mark.run();
  transaction.commit();
  return rows;
}

std::vector<std::string> find_journals(const std::string& database) {
  std::vector<std::pair<std::string, std::string>> found;  // (id, path)
  std::error_code error;
  const fs::path db_path(database);
  const fs::path dir = db_path.has_parent_path() ? db_path.parent_path() : fs::path(".");
  const std::string beside_prefix = db_path.filename().string() + ".journal-";
  auto scan = [&](const fs::path& directory, const std::string& prefix) {
    for (const auto& entry : fs::directory_iterator(directory, error)) {
      const std::string name = entry.path().filename().string();
      if (!name.starts_with(prefix) || name.ends_with(".tmp") || name.ends_with(".replayed")) continue;
      found.emplace_back(name.substr(prefix.size()), entry.path().string());
    }
  };
  scan(dir, beside_prefix);
  scan(fs::temp_directory_path(), tmp_prefix(database));
  std::sort(found.begin(), found.end());
  std::vector<std::string> paths;
  for (const auto& [id, path] : found) paths.push_back(path);
  return paths;
}

void mark_replayed(const std::string& path) {
  std::error_code error;
  fs::rename(path, path + ".replayed", error);
}

}  // namespace laconic::storage
