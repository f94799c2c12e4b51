// SPDX-License-Identifier: MIT
#include "history/schema.h"

#include "history/sqlite.h"

namespace writelab {
namespace {

// Version 1. A run is the document as it was written, byte for byte
// (document), with what identifies where it ran beside it; a figure row is
// one figure of one row of one experiment of a run, for trend and check.
// docs/results.md documents every column.
constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  recorded_at TEXT NOT NULL,
  source TEXT NOT NULL,
  started_at TEXT NOT NULL,
  finished_at TEXT NOT NULL,
  command TEXT NOT NULL,
  command_line TEXT NOT NULL,
  label TEXT NOT NULL,
  writelab_version TEXT NOT NULL,
  document_schema INTEGER NOT NULL,
  hostname TEXT NOT NULL,
  kernel TEXT NOT NULL,
  machine TEXT NOT NULL,
  cpu_model TEXT NOT NULL,
  cpus INTEGER NOT NULL,
  memory_bytes INTEGER NOT NULL,
  host_fingerprint TEXT NOT NULL,
  target_path TEXT NOT NULL,
  fs_type TEXT NOT NULL,
  mount_options TEXT NOT NULL,
  device TEXT NOT NULL,
  device_model TEXT NOT NULL,
  firmware TEXT NOT NULL,
  scheduler TEXT NOT NULL,
  target_fingerprint TEXT NOT NULL,
  errors INTEGER NOT NULL,
  document TEXT NOT NULL,
  UNIQUE (hostname, started_at, finished_at, command_line)
);
CREATE INDEX runs_by_machine ON runs (host_fingerprint, target_fingerprint, started_at);
CREATE INDEX runs_by_time ON runs (started_at, id);
CREATE INDEX runs_by_label ON runs (label);
CREATE TABLE figures (
  run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  experiment_index INTEGER NOT NULL,
  experiment TEXT NOT NULL,
  testbed TEXT NOT NULL,
  scheduler TEXT NOT NULL,
  mpi_rank INTEGER NOT NULL,
  row_name TEXT NOT NULL,
  figure TEXT NOT NULL,
  label TEXT NOT NULL,
  unit TEXT NOT NULL,
  median REAL,
  minimum REAL,
  maximum REAL,
  n INTEGER NOT NULL,
  samples TEXT NOT NULL
);
CREATE INDEX figures_by_figure ON figures (experiment, figure, row_name, run_id);
CREATE INDEX figures_by_run ON figures (run_id);
)sql";

constexpr Migration kMigrations[] = {{1, kSchemaV1}};
static_assert(kMigrations[std::size(kMigrations) - 1].version == kHistorySchemaVersion);

Result<int> PragmaInt(sqlite3* db, const char* pragma, const std::string& path) {
  auto st = Statement::Prepare(db, std::string("PRAGMA ") + pragma, path + ": read " + pragma);
  if (!st) return std::unexpected(st.error());
  auto row = st->Step();
  if (!row) return std::unexpected(row.error());
  if (!*row) return std::unexpected(PlainError(path + ": no " + pragma));
  auto v = st->Int(0);
  if (!v) return std::unexpected(v.error());
  return static_cast<int>(*v);
}

// What the file is before it is changed: writelab's, empty, or refused.
Status CheckOwner(sqlite3* db, const std::string& path, int version) {
  auto app = PragmaInt(db, "application_id", path);
  if (!app) return std::unexpected(app.error());
  if (*app == kHistoryApplicationId) return {};
  if (*app != 0)
    return std::unexpected(PlainError(path + ": an SQLite database of another program " +
                                      "(application_id " + std::to_string(*app) +
                                      "), not a writelab history"));
  auto tables = Statement::Prepare(db, "SELECT count(*) FROM sqlite_schema", path + ": read");
  if (!tables) return std::unexpected(tables.error());
  auto row = tables->Step();
  if (!row) return std::unexpected(row.error());
  auto n = tables->Int(0);
  if (!n) return std::unexpected(n.error());
  if (*n != 0 || version != 0)
    return std::unexpected(
        PlainError(path + ": an SQLite database that is not a writelab history (it holds " +
                   std::to_string(*n) + " tables and indexes of another program)"));
  return {};
}

// One step, with the version and the id, in one transaction.
Status ApplyStep(sqlite3* db, const Migration& m, const std::string& path) {
  const std::string what =
      path + ": migrate the history to schema version " + std::to_string(m.version);
  auto tx = Transaction::Begin(db, what);
  if (!tx) return std::unexpected(tx.error());
  // Another process may have migrated it while this one waited for the lock.
  auto now = PragmaInt(db, "user_version", path);
  if (!now) return std::unexpected(now.error());
  if (*now >= m.version) return {};
  if (*now != m.version - 1)
    return std::unexpected(PlainError(what + ": it is at version " + std::to_string(*now)));
  if (Status s = Exec(db, m.sql, what); !s) return s;
  const std::string pragmas = "PRAGMA application_id = " + std::to_string(kHistoryApplicationId) +
                              "; PRAGMA user_version = " + std::to_string(m.version) + ";";
  if (Status s = Exec(db, pragmas.c_str(), what); !s) return s;
  return tx->Commit();
}

}  // namespace

std::span<const Migration> HistoryMigrations() { return kMigrations; }

Result<int> SchemaVersion(sqlite3* db, const std::string& path) {
  return PragmaInt(db, "user_version", path);
}

Status CheckHistoryFile(sqlite3* db, const std::string& path, int newest, bool readable) {
  auto version = SchemaVersion(db, path);
  if (!version) return std::unexpected(version.error());
  if (Status s = CheckOwner(db, path, *version); !s) return s;
  if (*version > newest)
    return std::unexpected(PlainError(path + ": schema version " + std::to_string(*version) +
                                      ", newer than this writelab reads (" +
                                      std::to_string(newest) + "): a newer writelab wrote it"));
  if (readable && *version == 0)
    return std::unexpected(PlainError(path + ": an empty file, not a writelab history (nothing "
                                             "recorded yet; see writelab help history)"));
  return {};
}

Status Migrate(sqlite3* db, std::span<const Migration> steps, const std::string& path) {
  auto version = SchemaVersion(db, path);
  if (!version) return std::unexpected(version.error());
  const int newest = steps.empty() ? 0 : steps.back().version;
  if (Status s = CheckHistoryFile(db, path, newest, false); !s) return s;
  for (const Migration& m : steps)
    if (m.version > *version)
      if (Status s = ApplyStep(db, m, path); !s) return s;
  return {};
}

}  // namespace writelab
