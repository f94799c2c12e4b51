// SPDX-License-Identifier: MIT
// The results history: every run's document, kept in an SQLite database
// with the run's fingerprints and a row per figure (schema: history/schema.h,
// docs/results.md). Appends are safe from several processes at once (WAL,
// a busy timeout of 10 s, BEGIN IMMEDIATE); every value read back is
// checked (history/sqlite.h), and a document read back is parsed by the
// same checked reader as a result file (core/document_json.h).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "history/location.h"
#include "history/record.h"
#include "history/schema.h"
#include "history/sqlite.h"

namespace writelab {

// A run as `history list` shows it.
struct StoredRun {
  int64_t id = 0;
  std::string recorded_at;
  std::string source;  // "run", or "import FILE"
  RunRecord record;
};

struct RunFilter {
  std::string host;    // hostname, exactly
  std::string kernel;  // kernel release, or its prefix ending in '*' ("6.1*")
  std::string label;
  int64_t up_to_run = 0;  // > 0: only runs with this id or a lower one
};

// One point of a trend: a figure of one row in one run.
struct TrendPoint {
  int64_t run_id = 0;
  std::string started_at, hostname, kernel, label;
  // The row, and where it differs from the experiment's plain run: the test
  // bed, the scheduler, and which of the run's experiments of that name it
  // is when there are several ("plain (stream 2)").
  std::string series;
  std::string row, testbed, scheduler;  // what series is made of
  std::string figure_label, unit;
  double median = 0, min = 0, max = 0;
  int n = 0;
  std::vector<double> samples;
};

struct TrendQuery {
  std::string experiment;  // "fsync"
  std::string figure;      // "sync_max_ms"
  std::string row;         // "" for every row
  RunFilter runs;
};

class HistoryStore {
 public:
  // Opens (and creates, when create) the history at where: OpenHistoryFile,
  // then the file checked to be writelab's (or empty), then WAL and the busy
  // timeout, then Migrate to the current schema.
  static Result<HistoryStore> Open(const HistoryLocation& where, bool create);
  // Opens an existing history to read it: SQLite's read-only mode, nothing
  // written (no journal mode set, no schema made); a file that is not a
  // writelab history, or an empty one, is refused.
  static Result<HistoryStore> OpenReadOnly(const HistoryLocation& where);
  // Over an open connection (tests with their own migrations pass steps).
  static Result<HistoryStore> Over(SqliteDb db, std::string path,
                                   std::span<const Migration> steps = HistoryMigrations());
  // A database held in memory, from a file's bytes (the fuzz target).
  static Result<HistoryStore> FromBytes(std::string_view bytes);

  struct Appended {
    int64_t id = 0;
    bool duplicate = false;  // the run was there already (same host, start, end, command line)
  };
  // Keeps text (the document exactly as written) and what doc says of it,
  // in one transaction. A run already there is not added again.
  Result<Appended> Append(const std::string& text, const Document& doc, const std::string& source);

  // Runs, oldest first (by start time, then id).
  Result<std::vector<StoredRun>> List(const RunFilter& filter) const;
  // The run with id, or an error "no run N in PATH".
  Result<StoredRun> Get(int64_t id) const;
  // The document as the run wrote it, byte for byte.
  Result<std::string> DocumentText(int64_t id) const;
  // Removes a run and its figures; false when there was none.
  Result<bool> Forget(int64_t id);

  // The figure across runs, oldest first; each run's points in row order.
  Result<std::vector<TrendPoint>> Trend(const TrendQuery& q) const;

  // The experiments kept (experiment ""), or the figure keys of one.
  Result<std::vector<std::string>> Known(const std::string& experiment) const;

  // The newest run (latest start), or the newest with this experiment;
  // nullopt when there is none.
  Result<std::optional<StoredRun>> Newest(const std::string& experiment = "") const;
  // The latest run before `than` with this label.
  Result<std::optional<StoredRun>> LatestLabelled(const std::string& label,
                                                  const StoredRun& than) const;
  // The latest run before `than` of the same command on the same host and
  // target fingerprints.
  Result<std::optional<StoredRun>> PreviousOnSameMachine(const StoredRun& than) const;

  const std::string& path() const { return path_; }
  sqlite3* db() const { return db_.get(); }

 private:
  HistoryStore(SqliteDb db, std::string path) : db_(std::move(db)), path_(std::move(path)) {}
  Result<std::vector<StoredRun>> Query(const std::string& where,
                                       const std::vector<std::string>& args,
                                       const std::string& what, const std::string& tail) const;
  Status InsertFigures(int64_t run_id, const Document& doc);

  SqliteDb db_;
  std::string path_;
};

}  // namespace writelab
