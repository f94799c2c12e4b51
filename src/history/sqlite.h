// SPDX-License-Identifier: MIT
// A thin, checked layer over SQLite for the results history: a connection
// that closes itself, statements that finalise themselves, and column reads
// that check the type SQLite holds. A history file is input like any result
// file (another machine's import, a file damaged by a crash, a crafted
// one): a column of the wrong type is an error that names the column, never
// a zero or an empty string taken for data.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "writelab/error.h"

namespace writelab {

struct SqliteCloser {
  void operator()(sqlite3* db) const;
};
using SqliteDb = std::unique_ptr<sqlite3, SqliteCloser>;

// The error of a failed SQLite call, one line: "WHAT: database or disk is
// full". SQLite's codes that have an errno keep it (SQLITE_FULL: ENOSPC,
// SQLITE_READONLY: EROFS, SQLITE_BUSY/LOCKED: EBUSY, SQLITE_NOMEM: ENOMEM,
// SQLITE_PERM/AUTH: EACCES) so callers can tell a full disk from a damaged file.
Error SqliteError(sqlite3* db, int rc, const std::string& what);

// Whether an error came from a file that is not an SQLite database or is
// damaged (SQLITE_NOTADB, SQLITE_CORRUPT).
bool IsDamaged(int rc);

// Runs SQL without results (several statements allowed).
Status Exec(sqlite3* db, const char* sql, const std::string& what);

class Statement {
 public:
  // what: what the statement is for, in errors ("list runs").
  static Result<Statement> Prepare(sqlite3* db, std::string_view sql, std::string what);

  // 1-based, as SQLite's. A failed bind is reported by the next Step.
  Statement& Bind(int index, std::string_view text);
  Statement& Bind(int index, int64_t value);
  Statement& Bind(int index, double value);
  Statement& BindNull(int index);

  // True with a row to read, false when done.
  Result<bool> Step();
  // Steps to the end (an INSERT, UPDATE or DELETE).
  Status Run();
  // For the next use of the statement with other bindings.
  void Reset();

  // Checked reads of the current row's column (0-based): the value must be
  // of that type (a REAL column may hold an INTEGER; NULL is refused except
  // by RealOrNull). The error names the column and what it held.
  Result<std::string> Text(int column) const;
  Result<int64_t> Int(int column) const;
  Result<double> Real(int column) const;
  // NaN for NULL (a figure whose value was not finite).
  Result<double> RealOrNull(int column) const;
  int Changes() const;

  const std::string& what() const { return what_; }
  int last_rc() const { return last_rc_; }

 private:
  struct Finalizer {
    void operator()(sqlite3_stmt* s) const;
  };
  Statement(sqlite3* db, sqlite3_stmt* stmt, std::string what);
  Error ColumnError(int column, const char* expected) const;
  void Check(int rc);

  sqlite3* db_ = nullptr;
  std::unique_ptr<sqlite3_stmt, Finalizer> stmt_;
  std::string what_;
  int bind_rc_ = SQLITE_OK;
  int last_rc_ = SQLITE_OK;
};

// A transaction that rolls back unless committed. BEGIN IMMEDIATE: it takes
// the write lock at once (waiting up to the busy timeout), so that two
// processes appending at the same moment queue instead of one failing with
// SQLITE_BUSY halfway.
class Transaction {
 public:
  static Result<Transaction> Begin(sqlite3* db, const std::string& what);
  Transaction(Transaction&& other) noexcept;
  Transaction& operator=(Transaction&&) = delete;
  ~Transaction();
  Status Commit();

 private:
  Transaction(sqlite3* db, std::string what) : db_(db), what_(std::move(what)) {}
  sqlite3* db_ = nullptr;
  std::string what_;
};

}  // namespace writelab
