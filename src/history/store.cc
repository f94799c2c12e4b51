// SPDX-License-Identifier: MIT
#include "history/store.h"

#include <cerrno>
#include <map>
#include <tuple>

#include "core/clock.h"
#include "io/trusted_dir.h"

namespace writelab {
namespace {

constexpr int kBusyTimeoutMs = 10'000;

constexpr const char* kRunColumns =
    "id, recorded_at, source, started_at, finished_at, command, command_line, label, "
    "writelab_version, document_schema, hostname, kernel, machine, cpu_model, cpus, "
    "memory_bytes, host_fingerprint, target_path, fs_type, mount_options, device, device_model, "
    "firmware, scheduler, target_fingerprint, errors";

// A run from a row of kRunColumns, every column checked.
Result<StoredRun> ReadRun(const Statement& st) {
  StoredRun run;
  RunRecord& r = run.record;
  auto id = st.Int(0);
  if (!id) return std::unexpected(id.error());
  run.id = *id;
  std::pair<int, std::string*> texts[] = {{1, &run.recorded_at},
                                          {2, &run.source},
                                          {3, &r.started_at},
                                          {4, &r.finished_at},
                                          {5, &r.command},
                                          {6, &r.command_line},
                                          {7, &r.label},
                                          {8, &r.writelab_version},
                                          {10, &r.hostname},
                                          {11, &r.kernel},
                                          {12, &r.machine},
                                          {13, &r.cpu_model},
                                          {16, &r.host_fingerprint},
                                          {17, &r.target_path},
                                          {18, &r.fs_type},
                                          {19, &r.mount_options},
                                          {20, &r.device},
                                          {21, &r.device_model},
                                          {22, &r.firmware},
                                          {23, &r.scheduler},
                                          {24, &r.target_fingerprint}};
  for (auto& [column, into] : texts) {
    auto v = st.Text(column);
    if (!v) return std::unexpected(v.error());
    *into = std::move(*v);
  }
  std::pair<int, int64_t*> ints[] = {{14, &r.cpus}, {15, &r.memory_bytes}, {25, &r.errors}};
  for (auto& [column, into] : ints) {
    auto v = st.Int(column);
    if (!v) return std::unexpected(v.error());
    *into = *v;
  }
  auto schema = st.Int(9);
  if (!schema) return std::unexpected(schema.error());
  r.document_schema = static_cast<int>(*schema);
  return run;
}

// "kernel = ?" or, for a pattern ending in '*', "kernel GLOB ?".
std::string Filter(const RunFilter& f, std::vector<std::string>& args) {
  std::string where;
  auto add = [&](const std::string& value, const std::string& clause) {
    if (value.empty()) return;
    where += (where.empty() ? "" : " AND ") + clause;
    args.push_back(value);
  };
  add(f.host, "hostname = ?");
  add(f.kernel, f.kernel.find('*') != std::string::npos ? "kernel GLOB ?" : "kernel = ?");
  add(f.label, "label = ?");
  return where;
}

// The busy timeout makes a second connection wait for the first instead of
// failing: set before anything is read (the first read of a WAL file no
// connection has open rebuilds its index, under a lock).
void WaitWhenBusy(sqlite3* db) {
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  sqlite3_extended_result_codes(db, 1);
}

// The pragmas every connection sets. WAL lets readers and one writer work
// at once and survives a crash mid-append.
Status Configure(sqlite3* db, const std::string& path) {
  auto st = Statement::Prepare(db, "PRAGMA journal_mode = WAL", "history " + path);
  if (!st) return std::unexpected(st.error());
  auto row = st->Step();
  // A read-only file keeps its journal mode; writing then fails, and says so.
  if (!row && (st->last_rc() & 0xff) != SQLITE_READONLY) return std::unexpected(row.error());
  return Exec(db, "PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;", "history " + path);
}

}  // namespace

Result<HistoryStore> HistoryStore::Open(const HistoryLocation& where, bool create) {
  auto db = OpenHistoryFile(where, create, false);
  if (!db) return std::unexpected(db.error());
  return Over(std::move(*db), HistoryPathAsGiven(where.path));
}

Result<HistoryStore> HistoryStore::OpenReadOnly(const HistoryLocation& where) {
  auto db = OpenHistoryFile(where, false, true);
  if (!db) return std::unexpected(db.error());
  const std::string path = HistoryPathAsGiven(where.path);
  WaitWhenBusy(db->get());
  if (Status s = CheckHistoryFile(db->get(), path, kHistorySchemaVersion, true); !s)
    return std::unexpected(s.error());
  return HistoryStore(std::move(*db), path);
}

Result<HistoryStore> HistoryStore::Over(SqliteDb db, std::string path,
                                        std::span<const Migration> steps) {
  WaitWhenBusy(db.get());
  // Whose the file is, before its journal mode is touched: another
  // program's SQLite file is never switched to WAL.
  if (Status s = CheckHistoryFile(db.get(), path, steps.empty() ? 0 : steps.back().version, false);
      !s)
    return std::unexpected(s.error());
  if (Status s = Configure(db.get(), path); !s) return std::unexpected(s.error());
  if (Status s = Migrate(db.get(), steps, path); !s) return std::unexpected(s.error());
  return HistoryStore(std::move(db), std::move(path));
}

Result<HistoryStore> HistoryStore::FromBytes(std::string_view bytes) {
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(":memory:", &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  SqliteDb db(raw);
  if (rc != SQLITE_OK) return std::unexpected(SqliteError(raw, rc, "open a history in memory"));
  auto* copy = static_cast<unsigned char*>(sqlite3_malloc64(bytes.size() ? bytes.size() : 1));
  if (!copy) return std::unexpected(ErrnoError(ENOMEM, "history in memory"));
  std::copy(bytes.begin(), bytes.end(), copy);
  rc = sqlite3_deserialize(db.get(), "main", copy, bytes.size(), bytes.size(),
                           SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_RESIZEABLE);
  if (rc != SQLITE_OK) return std::unexpected(SqliteError(db.get(), rc, "history in memory"));
  return Over(std::move(db), "(in memory)");
}

Result<HistoryStore::Appended> HistoryStore::Append(const std::string& text, const Document& doc,
                                                    const std::string& source) {
  const std::string what = "history " + path_ + ": append the run";
  auto tx = Transaction::Begin(db(), what);
  if (!tx) return std::unexpected(tx.error());
  const RunRecord r = RunRecordOf(doc);
  auto insert = Statement::Prepare(
      db(),
      "INSERT INTO runs (recorded_at, source, started_at, finished_at, command, command_line, "
      "label, writelab_version, document_schema, hostname, kernel, machine, cpu_model, cpus, "
      "memory_bytes, host_fingerprint, target_path, fs_type, mount_options, device, "
      "device_model, firmware, scheduler, target_fingerprint, errors, document) VALUES "
      "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT DO NOTHING",
      what);
  if (!insert) return std::unexpected(insert.error());
  const std::string now = UtcNowIso8601();
  int i = 1;
  for (const std::string* s : {&now, &source, &r.started_at, &r.finished_at, &r.command,
                               &r.command_line, &r.label, &r.writelab_version})
    insert->Bind(i++, *s);
  insert->Bind(i++, int64_t{r.document_schema});
  for (const std::string* s : {&r.hostname, &r.kernel, &r.machine, &r.cpu_model})
    insert->Bind(i++, *s);
  insert->Bind(i++, r.cpus);
  insert->Bind(i++, r.memory_bytes);
  for (const std::string* s :
       {&r.host_fingerprint, &r.target_path, &r.fs_type, &r.mount_options, &r.device,
        &r.device_model, &r.firmware, &r.scheduler, &r.target_fingerprint})
    insert->Bind(i++, *s);
  insert->Bind(i++, r.errors);
  insert->Bind(i, text);
  if (Status s = insert->Run(); !s) return std::unexpected(s.error());
  Appended out;
  if (insert->Changes() == 0) {
    auto same = Statement::Prepare(db(),
                                   "SELECT id FROM runs WHERE hostname = ? AND started_at = ? AND "
                                   "finished_at = ? AND command_line = ?",
                                   what);
    if (!same) return std::unexpected(same.error());
    same->Bind(1, r.hostname).Bind(2, r.started_at).Bind(3, r.finished_at).Bind(4, r.command_line);
    auto row = same->Step();
    if (!row) return std::unexpected(row.error());
    if (!*row) return std::unexpected(PlainError(what + ": the run vanished"));
    auto id = same->Int(0);
    if (!id) return std::unexpected(id.error());
    return Appended{*id, true};
  }
  out.id = sqlite3_last_insert_rowid(db());
  if (Status s = InsertFigures(out.id, doc); !s) return std::unexpected(s.error());
  if (Status s = tx->Commit(); !s) return std::unexpected(s.error());
  return out;
}

Status HistoryStore::InsertFigures(int64_t run_id, const Document& doc) {
  auto st = Statement::Prepare(
      db(),
      "INSERT INTO figures (run_id, experiment_index, experiment, testbed, scheduler, mpi_rank, "
      "row_name, figure, label, unit, median, minimum, maximum, n, samples) VALUES "
      "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
      "history " + path_ + ": append the run's figures");
  if (!st) return std::unexpected(st.error());
  for (const FigureRecord& f : FigureRecordsOf(doc)) {
    st->Reset();
    st->Bind(1, run_id).Bind(2, int64_t{f.experiment_index}).Bind(3, f.experiment);
    st->Bind(4, f.testbed).Bind(5, f.scheduler).Bind(6, int64_t{f.mpi_rank});
    st->Bind(7, f.row).Bind(8, f.figure).Bind(9, f.label).Bind(10, f.unit);
    st->Bind(11, f.median).Bind(12, f.min).Bind(13, f.max).Bind(14, int64_t{f.n});
    st->Bind(15, SamplesToJson(f.samples));
    if (Status s = st->Run(); !s) return s;
  }
  return {};
}

Result<std::vector<StoredRun>> HistoryStore::Query(const std::string& where,
                                                   const std::vector<std::string>& args,
                                                   const std::string& what,
                                                   const std::string& tail) const {
  std::string sql = std::string("SELECT ") + kRunColumns + " FROM runs";
  if (!where.empty()) sql += " WHERE " + where;
  sql += tail.empty() ? " ORDER BY started_at, id" : " " + tail;
  auto st = Statement::Prepare(db(), sql, "history " + path_ + ": " + what);
  if (!st) return std::unexpected(st.error());
  for (size_t i = 0; i < args.size(); ++i) st->Bind(static_cast<int>(i + 1), args[i]);
  std::vector<StoredRun> out;
  while (true) {
    auto row = st->Step();
    if (!row) return std::unexpected(row.error());
    if (!*row) return out;
    auto run = ReadRun(*st);
    if (!run) return std::unexpected(run.error());
    out.push_back(std::move(*run));
  }
}

Result<std::vector<StoredRun>> HistoryStore::List(const RunFilter& filter) const {
  std::vector<std::string> args;
  return Query(Filter(filter, args), args, "list runs", "");
}

Result<StoredRun> HistoryStore::Get(int64_t id) const {
  auto runs = Query("id = " + std::to_string(id), {}, "read run " + std::to_string(id), "");
  if (!runs) return std::unexpected(runs.error());
  if (runs->empty())
    return std::unexpected(PlainError("no run " + std::to_string(id) + " in " + path_));
  return runs->front();
}

Result<std::string> HistoryStore::DocumentText(int64_t id) const {
  auto st = Statement::Prepare(db(), "SELECT document FROM runs WHERE id = ?",
                               "history " + path_ + ": read run " + std::to_string(id));
  if (!st) return std::unexpected(st.error());
  st->Bind(1, id);
  auto row = st->Step();
  if (!row) return std::unexpected(row.error());
  if (!*row) return std::unexpected(PlainError("no run " + std::to_string(id) + " in " + path_));
  return st->Text(0);
}

Result<bool> HistoryStore::Forget(int64_t id) {
  const std::string what = "history " + path_ + ": forget run " + std::to_string(id);
  auto tx = Transaction::Begin(db(), what);
  if (!tx) return std::unexpected(tx.error());
  int removed = 0;
  for (const char* sql :
       {"DELETE FROM figures WHERE run_id = ?", "DELETE FROM runs WHERE id = ?"}) {
    auto st = Statement::Prepare(db(), sql, what);
    if (!st) return std::unexpected(st.error());
    st->Bind(1, id);
    if (Status s = st->Run(); !s) return std::unexpected(s.error());
    removed = st->Changes();
  }
  if (Status s = tx->Commit(); !s) return std::unexpected(s.error());
  return removed > 0;
}

Result<std::vector<std::string>> HistoryStore::Known(const std::string& experiment) const {
  auto st = Statement::Prepare(
      db(),
      experiment.empty()
          ? "SELECT DISTINCT experiment FROM figures ORDER BY experiment"
          : "SELECT DISTINCT figure FROM figures WHERE experiment = ? ORDER BY figure",
      "history " + path_ + ": list what is kept");
  if (!st) return std::unexpected(st.error());
  if (!experiment.empty()) st->Bind(1, experiment);
  std::vector<std::string> out;
  while (true) {
    auto row = st->Step();
    if (!row) return std::unexpected(row.error());
    if (!*row) return out;
    auto v = st->Text(0);
    if (!v) return std::unexpected(v.error());
    out.push_back(std::move(*v));
  }
}

Result<std::optional<StoredRun>> HistoryStore::Newest(const std::string& experiment) const {
  auto runs = experiment.empty() ? Query("", {}, "find the newest run",
                                         "ORDER BY started_at DESC, id DESC LIMIT 1")
                                 : Query("id IN (SELECT run_id FROM figures WHERE experiment = ?)",
                                         {experiment}, "find the newest " + experiment + " run",
                                         "ORDER BY started_at DESC, id DESC LIMIT 1");
  if (!runs) return std::unexpected(runs.error());
  if (runs->empty()) return std::nullopt;
  return runs->front();
}

namespace {

// The condition "before run than", with its start time bound twice: started
// earlier, or in the same second and kept before it (runs of one second, a
// script's, are told apart by the order they were kept).
std::string KeptBefore(const StoredRun& than) {
  return "(started_at < ? OR (started_at = ? AND id < " + std::to_string(than.id) + "))";
}

}  // namespace

Result<std::optional<StoredRun>> HistoryStore::LatestLabelled(const std::string& label,
                                                              const StoredRun& than) const {
  auto runs = Query("label = ? AND " + KeptBefore(than),
                    {label, than.record.started_at, than.record.started_at},
                    "find the run labelled " + label, "ORDER BY started_at DESC, id DESC LIMIT 1");
  if (!runs) return std::unexpected(runs.error());
  if (runs->empty()) return std::nullopt;
  return runs->front();
}

Result<std::optional<StoredRun>> HistoryStore::PreviousOnSameMachine(const StoredRun& than) const {
  const RunRecord& r = than.record;
  auto runs = Query(
      "host_fingerprint = ? AND target_fingerprint = ? AND command = ? AND " + KeptBefore(than),
      {r.host_fingerprint, r.target_fingerprint, r.command, r.started_at, r.started_at},
      "find the previous run on this machine", "ORDER BY started_at DESC, id DESC LIMIT 1");
  if (!runs) return std::unexpected(runs.error());
  if (runs->empty()) return std::nullopt;
  return runs->front();
}

}  // namespace writelab
