// SPDX-License-Identifier: MIT
// The history database's schema (docs/results.md, "The results history"),
// and how a database made by an earlier writelab is brought up to it.
//
// The schema version is SQLite's user_version; the file says it is a
// writelab history through its application_id. A migration is a step from
// version N-1 to N, run in one transaction with the version change, so a
// database is at one version or the next, never between: a step that fails
// (a full disk) leaves it as it was. Version 0 is the empty file.
#pragma once

#include <sqlite3.h>

#include <span>
#include <string>

#include "writelab/error.h"

namespace writelab {

// The schema this writelab writes (the last migration's version).
inline constexpr int kHistorySchemaVersion = 1;

// "WLHS": PRAGMA application_id of a writelab history.
inline constexpr int kHistoryApplicationId = 0x574c4853;

struct Migration {
  int version;      // the version the step brings the database to
  const char* sql;  // from version - 1; may hold several statements
};

// The steps from the empty file to the current schema, in order; the last
// one's version is the schema this writelab writes.
std::span<const Migration> HistoryMigrations();

// Brings db (at path, for messages) to the last version of steps, a
// transaction per step. Refused, with one line that names path: a file
// whose application_id is another program's, a non-empty database without
// writelab's id (someone else's SQLite file), and a version newer than the
// steps know ("history.sqlite: schema version 3, newer than this writelab
// reads (2): a newer writelab wrote it").
Status Migrate(sqlite3* db, std::span<const Migration> steps, const std::string& path);

// The database's schema version (user_version).
Result<int> SchemaVersion(sqlite3* db, const std::string& path);

// Before anything is written to the file (its journal mode included): it
// is writelab's, or empty; refused as Migrate refuses. For reading
// (readable), an empty file is refused too: "PATH: an empty file, not a
// writelab history".
Status CheckHistoryFile(sqlite3* db, const std::string& path, int newest, bool readable);

}  // namespace writelab
