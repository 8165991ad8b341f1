#include "storage/leaf_salvage.hpp"

#include <algorithm>
#include <optional>
#include <set>

#include <sqlite3.h>

#include "storage/sqlite_pages.hpp"
#include "storage/statement.hpp"

namespace laconic::storage {
namespace {

using pages::Value;

struct ShapeColumn {
  std::string name;
  char affinity = '*';  // 'I' integer, 'R' real, 'T' text, '*' anything
  bool not_null = false;
};

// A table as its rows are stored: the columns in record order (a WITHOUT ROWID table's key
// first), where the rowid's alias sits (stored as NULL), and how many columns every row has (a
// column added later with a default may be missing from older rows).
struct Shape {
  std::string table;
  bool without_rowid = false;
  int alias = -1;
  std::vector<ShapeColumn> columns;
  std::size_t required = 0;
};

char affinity_of(std::string type) {
  for (char& c : type) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (type.find("INT") != std::string::npos) return 'I';
  if (type.find("CHAR") != std::string::npos || type.find("TEXT") != std::string::npos) return 'T';
  if (type.find("REAL") != std::string::npos || type.find("FLOA") != std::string::npos) return 'R';
  return '*';
}

Shape shape_of(sqlite3* db, const std::string& table) {
  Shape shape;
  shape.table = table;
  Statement sql(db, "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?1");
  sql.bind_text(1, table);
  if (sql.step()) shape.without_rowid = sql.column_text(0).find("WITHOUT ROWID") != std::string::npos;
  struct Info {
    ShapeColumn column;
    int pk = 0;
    bool has_default = false;
  };
  std::vector<Info> infos;
  Statement info(db, str_cat("PRAGMA table_info(", table, ")"));
  while (info.step())
    infos.push_back({{info.column_text(1), affinity_of(info.column_text(2)), info.column_int64(3) != 0},
                     static_cast<int>(info.column_int64(5)),
                     !info.column_is_null(4)});
  std::vector<Info> ordered;
  if (shape.without_rowid) {  // the key's columns in key order, then the others
    for (int k = 1; k <= static_cast<int>(infos.size()); ++k)
      for (const Info& i : infos)
        if (i.pk == k) ordered.push_back(i);
    for (const Info& i : infos)
      if (i.pk == 0) ordered.push_back(i);
  } else {
    ordered = infos;
    int keys = 0;
    for (const Info& i : infos) keys += i.pk > 0 ? 1 : 0;
    for (std::size_t c = 0; c < infos.size(); ++c)
      if (keys == 1 && infos[c].pk == 1 && infos[c].column.affinity == 'I') shape.alias = static_cast<int>(c);
  }
  for (std::size_t c = 0; c < ordered.size(); ++c) {
    shape.columns.push_back(ordered[c].column);
    if (shape.without_rowid || (ordered[c].column.not_null && !ordered[c].has_default)) shape.required = c + 1;
  }
  return shape;
}

bool fits(const Shape& shape, const std::vector<Value>& values) {
  if (values.size() < shape.required || values.size() > shape.columns.size()) return false;
  for (std::size_t c = 0; c < values.size(); ++c) {
    const ShapeColumn& column = shape.columns[c];
    const Value::Type type = values[c].type;
    if (static_cast<int>(c) == shape.alias) {
      if (type != Value::Type::Null) return false;
      continue;
    }
    const bool ok = type == Value::Type::Null      ? !column.not_null
                    : type == Value::Type::Integer ? column.affinity != 'T'
                    : type == Value::Type::Real    ? column.affinity == 'R' || column.affinity == '*'
                    : type == Value::Type::Text    ? column.affinity == 'T' || column.affinity == '*'
                                                   : column.affinity == '*';
    if (!ok) return false;
  }
  return true;
}

// How closely a record fits: one point per value of exactly its column's type (an integer in a
// REAL column fits, but less well than in an INTEGER one).
int closeness(const Shape& shape, const std::vector<Value>& values) {
  int score = 0;
  for (std::size_t c = 0; c < values.size(); ++c) {
    const char a = shape.columns[c].affinity;
    const Value::Type t = values[c].type;
    score += (t == Value::Type::Integer && a == 'I') || (t == Value::Type::Real && a == 'R') ||
                     (t == Value::Type::Text && a == 'T')
                 ? 1
                 : 0;
  }
  return score;
}

// An index's entries as records: its columns, then the row's rowid (an index of a rowid table).
std::vector<Shape> index_shapes(sqlite3* db, const Shape& table) {
  std::vector<Shape> out;
  if (table.without_rowid) return out;  // laconic's WITHOUT ROWID tables have no other index
  Statement list(db, str_cat("PRAGMA index_list(", table.table, ")"));
  std::vector<std::string> names;
  while (list.step()) names.push_back(list.column_text(1));
  for (const std::string& name : names) {
    Shape index;
    index.table = name;
    index.without_rowid = true;  // stored in an index b-tree
    Statement info(db, str_cat("PRAGMA index_info(", name, ")"));
    while (info.step()) {
      const auto cid = info.column_int64(1);
      index.columns.push_back(cid >= 0 && cid < static_cast<std::int64_t>(table.columns.size())
                                  ? table.columns[static_cast<std::size_t>(cid)]
                                  : ShapeColumn{"rowid", 'I', true});
    }
    index.columns.push_back({"rowid", 'I', true});
    index.required = index.columns.size();
    out.push_back(std::move(index));
  }
  return out;
}

// Every laconic table and index as a shape; those of `tables` first, in that order (the others
// are decoys: a page of theirs is recognised, and left alone).
std::vector<Shape> all_shapes(sqlite3* db, const std::vector<std::string>& tables) {
  std::vector<Shape> out;
  for (const std::string& table : tables) out.push_back(shape_of(db, table));
  Statement names(db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'");
  std::vector<std::string> all;
  while (names.step()) all.push_back(names.column_text(0));
  for (const std::string& name : all) {
    Shape table = shape_of(db, name);
    for (Shape& index : index_shapes(db, table)) out.push_back(std::move(index));
    if (std::find(tables.begin(), tables.end(), name) == tables.end()) out.push_back(std::move(table));
  }
  return out;
}

// The one shape every record of a page fits, closest first; nothing when none, or two fit
// equally well.
std::optional<std::size_t> page_shape(const std::vector<Shape>& shapes, const std::vector<pages::Cell>& cells,
                                      bool index_page, bool& tie) {
  std::optional<std::size_t> best;
  int best_score = -1;
  tie = false;
  for (std::size_t s = 0; s < shapes.size(); ++s) {
    if (shapes[s].without_rowid != index_page) continue;
    int score = 0;
    bool all = true;
    for (const pages::Cell& cell : cells) {
      if (!fits(shapes[s], cell.values)) {
        all = false;
        break;
      }
      score += closeness(shapes[s], cell.values);
    }
    if (!all) continue;
    if (score > best_score) {
      best = s;
      best_score = score;
      tie = false;
    } else if (score == best_score) {
      tie = true;
    }
  }
  return tie ? std::nullopt : best;
}

// Inserts rows of one shape, one prepared statement per number of values.
class RowInserter {
 public:
  RowInserter(sqlite3* db, const Shape& shape) : db_(db), shape_(shape) {}

  bool insert(std::int64_t rowid, const std::vector<Value>& values, bool table_leaf) {
    Statement& statement = prepared(values.size(), table_leaf);
    statement.reset();
    int at = 1;
    if (table_leaf && shape_.alias < 0) statement.bind_int64(at++, rowid);
    for (std::size_t c = 0; c < values.size(); ++c, ++at) {
      const Value& v = values[c];
      if (static_cast<int>(c) == shape_.alias) {
        statement.bind_int64(at, rowid);
        continue;
      }
      switch (v.type) {
        case Value::Type::Null: statement.bind_null(at); break;
        case Value::Type::Integer: statement.bind_int64(at, v.integer); break;
        case Value::Type::Real: statement.bind_double(at, v.real); break;
        default: statement.bind_text(at, v.bytes);
      }
    }
    statement.run();
    return sqlite3_changes(db_) > 0;
  }

 private:
  Statement& prepared(std::size_t count, bool table_leaf) {
    auto& slot = statements_[{count, table_leaf}];
    if (!slot) {
      std::string columns = table_leaf && shape_.alias < 0 ? "rowid" : "";
      std::string marks = columns.empty() ? "" : "?";
      for (std::size_t c = 0; c < count; ++c) {
        columns += (columns.empty() ? "" : ", ") + shape_.columns[c].name;
        marks += marks.empty() ? "?" : ", ?";
      }
      slot = std::make_unique<Statement>(
          db_, str_cat("INSERT OR IGNORE INTO ", shape_.table, " (", columns, ") VALUES (", marks, ")"));
    }
    return *slot;
  }

  sqlite3* db_;
  const Shape& shape_;
  std::map<std::pair<std::size_t, bool>, std::unique_ptr<Statement>> statements_;
};

// Every page a tree reaches from `root` (interior and leaf), in `reached`; a page it points to
// that is not a b-tree page counts in `damaged`. Returns those that hold records. Bounded: a
// page is visited once.
std::vector<std::uint32_t> walk_tree(pages::SqliteFile& file, std::uint32_t root, std::set<std::uint32_t>& reached,
                                     std::int64_t& damaged) {
  std::vector<std::uint32_t> holding;
  std::vector<std::uint32_t> stack = {root};
  while (!stack.empty()) {
    const std::uint32_t number = stack.back();
    stack.pop_back();
    if (!reached.insert(number).second) continue;
    const auto page = file.btree_page(number);
    if (!page) {
      ++damaged;
      continue;
    }
    if (page->holds_records()) holding.push_back(number);
    stack.insert(stack.end(), page->children.rbegin(), page->children.rend());
  }
  return holding;
}

// The pages to read: each of `tables`' own tree's pages that hold records (with the table), then
// every page no tree reaches and the freelist does not hold (without).
std::vector<std::pair<std::optional<std::size_t>, std::uint32_t>> pages_to_read(
    pages::SqliteFile& file, const std::vector<std::string>& tables, const std::map<std::string, std::uint32_t>& roots,
    std::int64_t& damaged) {
  std::vector<std::pair<std::optional<std::size_t>, std::uint32_t>> out;
  std::set<std::uint32_t> reached;
  std::int64_t elsewhere = 0;
  walk_tree(file, 1, reached, elsewhere);
  for (const auto& [name, root] : roots) {
    const auto t = std::find(tables.begin(), tables.end(), name);
    std::int64_t& count = t == tables.end() ? elsewhere : damaged;
    for (const std::uint32_t page : walk_tree(file, root, reached, count))
      if (t != tables.end()) out.emplace_back(static_cast<std::size_t>(t - tables.begin()), page);
  }
  for (const std::uint32_t free : file.freelist_pages()) reached.insert(free);
  for (std::uint32_t number = 2; number <= file.page_count(); ++number)
    if (!reached.count(number)) out.emplace_back(std::nullopt, number);
  return out;
}

}  // namespace

LeafSalvage salvage_leaf_pages(const std::string& path, Database& to, const std::vector<std::string>& tables,
                               const std::map<std::string, std::uint32_t>& roots) {
  pages::SqliteFile file(path);
  const std::vector<Shape> shapes = all_shapes(to.handle(), tables);  // `tables` first
  std::vector<std::unique_ptr<RowInserter>> inserters;
  for (std::size_t t = 0; t < tables.size(); ++t)
    inserters.push_back(std::make_unique<RowInserter>(to.handle(), shapes[t]));
  LeafSalvage out;
  for (const std::string& table : tables) out.rows.emplace_back(table, 0);

  Transaction transaction(to.handle());
  for (const auto& [known, number] : pages_to_read(file, tables, roots, out.damaged_pages)) {
    const auto page = file.btree_page(number);
    if (!page || !page->holds_records()) continue;
    const std::vector<pages::Cell> cells = file.records(number, *page, out.unreadable_cells);
    bool tie = false;
    const std::optional<std::size_t> shape = known ? known : page_shape(shapes, cells, page->index(), tie);
    if (!shape) {  // fits no laconic table (the schema's own pages), or two alike: whose cannot be told
      out.unmatched_cells += tie ? static_cast<std::int64_t>(cells.size()) : 0;
      continue;
    }
    if (*shape >= tables.size()) continue;  // a page of a table or index not recovered this way
    ++out.leaf_pages;
    const bool table_leaf = page->type == pages::PageType::TableLeaf;
    for (const pages::Cell& cell : cells) {
      if (!fits(shapes[*shape], cell.values)) {
        ++out.unmatched_cells;
        continue;
      }
      if (inserters[*shape]->insert(cell.rowid, cell.values, table_leaf)) ++out.rows[*shape].second;
    }
  }
  transaction.commit();
  return out;
}

}  // namespace laconic::storage
