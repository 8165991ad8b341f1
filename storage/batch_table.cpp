#include "storage/batch_table.hpp"

#include <cmath>
#include <cstring>
#include <new>

#include <sqlite3.h>

#include "storage/statement.hpp"

namespace laconic::storage {
namespace {

enum Column { kKeyId, kStep, kEpoch, kWorker, kWallTime, kValue, kBatchArgument };

struct Cursor {
  sqlite3_vtab_cursor base;  // first, as SQLite requires
  const Batch* batch = nullptr;
  std::size_t position = 0;
};

int connect(sqlite3* db, void*, int, const char* const*, sqlite3_vtab** table, char**) {
  const int rc =
      sqlite3_declare_vtab(db, "CREATE TABLE x(key_id, step, epoch, worker, wall_time, value, batch HIDDEN)");
  if (rc != SQLITE_OK) return rc;
  *table = static_cast<sqlite3_vtab*>(sqlite3_malloc(sizeof(sqlite3_vtab)));
  if (*table == nullptr) return SQLITE_NOMEM;
  std::memset(*table, 0, sizeof(sqlite3_vtab));
  return SQLITE_OK;
}

int disconnect(sqlite3_vtab* table) {
  sqlite3_free(table);
  return SQLITE_OK;
}

// The batch argument must be given (laconic_batch(?)); without it there is nothing to scan.
int best_index(sqlite3_vtab*, sqlite3_index_info* info) {
  for (int i = 0; i < info->nConstraint; ++i) {
    const auto& c = info->aConstraint[i];
    if (c.iColumn == kBatchArgument && c.op == SQLITE_INDEX_CONSTRAINT_EQ && c.usable) {
      info->aConstraintUsage[i].argvIndex = 1;
      info->aConstraintUsage[i].omit = 1;
      info->idxNum = 1;
      info->estimatedCost = 1;
      return SQLITE_OK;
    }
  }
  return SQLITE_CONSTRAINT;
}

int open(sqlite3_vtab*, sqlite3_vtab_cursor** cursor) {
  auto* c = new (std::nothrow) Cursor();
  if (c == nullptr) return SQLITE_NOMEM;
  *cursor = &c->base;
  return SQLITE_OK;
}

int close(sqlite3_vtab_cursor* cursor) {
  delete reinterpret_cast<Cursor*>(cursor);
  return SQLITE_OK;
}

int filter(sqlite3_vtab_cursor* cursor, int, const char*, int argc, sqlite3_value** argv) {
  auto* c = reinterpret_cast<Cursor*>(cursor);
  c->batch = argc > 0 ? static_cast<const Batch*>(sqlite3_value_pointer(argv[0], kBatchPointerType)) : nullptr;
  c->position = 0;
  return SQLITE_OK;
}

int next(sqlite3_vtab_cursor* cursor) {
  ++reinterpret_cast<Cursor*>(cursor)->position;
  return SQLITE_OK;
}

int eof(sqlite3_vtab_cursor* cursor) {
  const auto* c = reinterpret_cast<Cursor*>(cursor);
  return c->batch == nullptr || c->position >= c->batch->order->size();
}

int column(sqlite3_vtab_cursor* cursor, sqlite3_context* context, int n) {
  const auto* c = reinterpret_cast<Cursor*>(cursor);
  const BatchRow& row = (*c->batch->rows)[(*c->batch->order)[c->position]];
  switch (n) {
    case kKeyId:
      sqlite3_result_int64(context, (*c->batch->key_ids)[row.key]);
      break;
    case kStep:
      sqlite3_result_int64(context, row.step);
      break;
    case kEpoch:
      sqlite3_result_int64(context, row.epoch);
      break;
    case kWorker:
      sqlite3_result_int64(context, row.worker);
      break;
    case kWallTime:
      sqlite3_result_double(context, row.wall_time);
      break;
    case kValue:
      // NaN is stored as NULL, as everywhere in laconic.
      if (std::isnan(row.value))
        sqlite3_result_null(context);
      else
        sqlite3_result_double(context, row.value);
      break;
    default:
      sqlite3_result_null(context);
  }
  return SQLITE_OK;
}

int rowid(sqlite3_vtab_cursor* cursor, sqlite3_int64* id) {
  *id = static_cast<sqlite3_int64>(reinterpret_cast<Cursor*>(cursor)->position);
  return SQLITE_OK;
}

sqlite3_module make_module() {
  sqlite3_module m{};
  m.iVersion = 0;
  m.xCreate = nullptr;  // eponymous only: laconic_batch(?) exists without CREATE VIRTUAL TABLE
  m.xConnect = connect;
  m.xBestIndex = best_index;
  m.xDisconnect = disconnect;
  m.xOpen = open;
  m.xClose = close;
  m.xFilter = filter;
  m.xNext = next;
  m.xEof = eof;
  m.xColumn = column;
  m.xRowid = rowid;
  return m;
}

const sqlite3_module kModule = make_module();

}  // namespace

void register_batch_table(sqlite3* db) {
  // Registering again would replace the module under statements that use it; ask first.
  sqlite3_stmt* probe = nullptr;
  const int rc = sqlite3_prepare_v2(db, "SELECT 1 FROM laconic_batch(NULL)", -1, &probe, nullptr);
  sqlite3_finalize(probe);
  if (rc == SQLITE_OK) return;
  check(db, sqlite3_create_module_v2(db, "laconic_batch", &kModule, nullptr, nullptr),
        "while registering the laconic_batch table");
}

}  // namespace laconic::storage
