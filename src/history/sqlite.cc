// SPDX-License-Identifier: MIT
#include "history/sqlite.h"

#include <cerrno>
#include <cmath>
#include <limits>
#include <utility>

namespace writelab {

void SqliteCloser::operator()(sqlite3* db) const { sqlite3_close_v2(db); }

void Statement::Finalizer::operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }

namespace {

// The errno behind an SQLite result code, 0 when none fits.
int ErrnoOf(int rc) {
  switch (rc & 0xff) {
    case SQLITE_FULL:
      return ENOSPC;
    case SQLITE_READONLY:
      return EROFS;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return EBUSY;
    case SQLITE_NOMEM:
      return ENOMEM;
    case SQLITE_PERM:
    case SQLITE_AUTH:
      return EACCES;
    default:
      return 0;
  }
}

const char* TypeName(int type) {
  switch (type) {
    case SQLITE_INTEGER:
      return "an integer";
    case SQLITE_FLOAT:
      return "a real";
    case SQLITE_TEXT:
      return "text";
    case SQLITE_BLOB:
      return "a blob";
    default:
      return "NULL";
  }
}

}  // namespace

Error SqliteError(sqlite3* db, int rc, const std::string& what) {
  // The connection's message says more than the code's ("no such table:
  // runs" rather than "SQL logic error"), when it is about this call.
  const char* message = db && sqlite3_errcode(db) == rc ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  if (int code = ErrnoOf(rc)) return ErrnoError(code, what + " (" + message + ")");
  return PlainError(what + ": " + message);
}

bool IsDamaged(int rc) { return (rc & 0xff) == SQLITE_NOTADB || (rc & 0xff) == SQLITE_CORRUPT; }

Status Exec(sqlite3* db, const char* sql, const std::string& what) {
  int rc = sqlite3_exec(db, sql, nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return std::unexpected(SqliteError(db, rc, what));
  return {};
}

Statement::Statement(sqlite3* db, sqlite3_stmt* stmt, std::string what)
    : db_(db), stmt_(stmt), what_(std::move(what)) {}

Result<Statement> Statement::Prepare(sqlite3* db, std::string_view sql, std::string what) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return std::unexpected(SqliteError(db, rc, what));
  }
  return Statement(db, stmt, std::move(what));
}

void Statement::Check(int rc) {
  if (rc != SQLITE_OK && bind_rc_ == SQLITE_OK) bind_rc_ = rc;
}

Statement& Statement::Bind(int index, std::string_view text) {
  Check(sqlite3_bind_text64(stmt_.get(), index, text.data(), text.size(), SQLITE_TRANSIENT,
                            SQLITE_UTF8));
  return *this;
}

Statement& Statement::Bind(int index, int64_t value) {
  Check(sqlite3_bind_int64(stmt_.get(), index, value));
  return *this;
}

Statement& Statement::Bind(int index, double value) {
  // SQLite stores NaN as NULL; infinities are kept as such (JSON has none).
  Check(std::isnan(value) ? sqlite3_bind_null(stmt_.get(), index)
                          : sqlite3_bind_double(stmt_.get(), index, value));
  return *this;
}

Statement& Statement::BindNull(int index) {
  Check(sqlite3_bind_null(stmt_.get(), index));
  return *this;
}

Result<bool> Statement::Step() {
  if (bind_rc_ != SQLITE_OK) return std::unexpected(SqliteError(db_, bind_rc_, what_));
  last_rc_ = sqlite3_step(stmt_.get());
  if (last_rc_ == SQLITE_ROW) return true;
  if (last_rc_ == SQLITE_DONE) return false;
  return std::unexpected(SqliteError(db_, last_rc_, what_));
}

Status Statement::Run() {
  while (true) {
    auto row = Step();
    if (!row) return std::unexpected(row.error());
    if (!*row) return {};
  }
}

void Statement::Reset() {
  sqlite3_reset(stmt_.get());
  sqlite3_clear_bindings(stmt_.get());
  bind_rc_ = SQLITE_OK;
}

Error Statement::ColumnError(int column, const char* expected) const {
  const char* name = sqlite3_column_name(stmt_.get(), column);
  return PlainError(what_ + ": column " + (name ? name : std::to_string(column)) + " holds " +
                    TypeName(sqlite3_column_type(stmt_.get(), column)) + ", not " + expected +
                    " (a damaged history?)");
}

Result<std::string> Statement::Text(int column) const {
  if (sqlite3_column_type(stmt_.get(), column) != SQLITE_TEXT)
    return std::unexpected(ColumnError(column, "text"));
  const unsigned char* p = sqlite3_column_text(stmt_.get(), column);
  int n = sqlite3_column_bytes(stmt_.get(), column);
  if (!p) return std::unexpected(ErrnoError(ENOMEM, what_));
  return std::string(reinterpret_cast<const char*>(p), static_cast<size_t>(n));
}

Result<int64_t> Statement::Int(int column) const {
  if (sqlite3_column_type(stmt_.get(), column) != SQLITE_INTEGER)
    return std::unexpected(ColumnError(column, "an integer"));
  return static_cast<int64_t>(sqlite3_column_int64(stmt_.get(), column));
}

Result<double> Statement::Real(int column) const {
  int type = sqlite3_column_type(stmt_.get(), column);
  if (type != SQLITE_FLOAT && type != SQLITE_INTEGER)
    return std::unexpected(ColumnError(column, "a number"));
  return sqlite3_column_double(stmt_.get(), column);
}

Result<double> Statement::RealOrNull(int column) const {
  if (sqlite3_column_type(stmt_.get(), column) == SQLITE_NULL)
    return std::numeric_limits<double>::quiet_NaN();
  return Real(column);
}

int Statement::Changes() const { return sqlite3_changes(db_); }

Result<Transaction> Transaction::Begin(sqlite3* db, const std::string& what) {
  if (Status s = Exec(db, "BEGIN IMMEDIATE", what); !s) return std::unexpected(s.error());
  return Transaction(db, what);
}

Transaction::Transaction(Transaction&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)), what_(std::move(other.what_)) {}

Transaction::~Transaction() {
  if (db_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

Status Transaction::Commit() {
  Status s = Exec(db_, "COMMIT", what_);
  if (s) db_ = nullptr;  // else the destructor rolls back
  return s;
}

}  // namespace writelab
