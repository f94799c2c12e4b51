// SPDX-License-Identifier: MIT
// The typed result tree. Experiments fill it; reporters (text, JSON, CSV, HTML,
// compare) read it and nothing else. It knows nothing of options, JSON or
// terminals. Every number carries its unit; every figure says what its timing
// includes. docs/results.md documents the JSON form field by field.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "core/histogram.h"
#include "core/stats.h"

namespace writelab {

constexpr int kSchemaVersion = 1;

using ParamValue = std::variant<bool, int64_t, double, std::string>;

struct Param {
  std::string key;
  ParamValue value;
  std::string unit;  // "" when the value has none
};

// One figure of a row, summarised over the trials that measured it.
struct Figure {
  std::string key;       // stable identifier: "mb_s"
  std::string label;     // for people: "MB/s overall"
  std::string unit;      // "MB/s", "s", "bytes", "pages"...
  std::string includes;  // what the figure covers: "writes and the final fsync"
  Summary value;
};

// How an experiment declares a figure, once, in a table that also orders
// its rows' figures.
struct FigureSpec {
  const char* key;
  const char* label;
  const char* unit;
  const char* includes;
  Figure Make(Summary value) const { return {key, label, unit, includes, std::move(value)}; }
};

// A figure key that is checked against its experiment's table when the
// program is compiled: KeyOf(kStreamFigures, "mb_s") does not compile when
// the table has no "mb_s". Table columns, compare figures and the survey name
// figures only this way.
struct FigureKey {
  const char* name;
};

template <size_t N>
consteval FigureKey KeyOf(const FigureSpec (&specs)[N], std::string_view key) {
  for (const FigureSpec& s : specs)
    if (std::string_view(s.key) == key) return {s.key};
  throw "no figure with this key in the table";  // in consteval: a compile error
}

// The table entry itself, checked as by KeyOf (for a figure added late).
template <size_t N>
consteval const FigureSpec& SpecOf(const FigureSpec (&specs)[N], std::string_view key) {
  for (const FigureSpec& s : specs)
    if (std::string_view(s.key) == key) return s;
  throw "no figure with this key in the table";
}

// The keys of a table's columns, each checked as by KeyOf.
template <size_t N, size_t M>
consteval std::array<FigureKey, M> KeysOf(const FigureSpec (&specs)[N],
                                          const std::string_view (&keys)[M]) {
  std::array<FigureKey, M> out{};
  for (size_t i = 0; i < M; ++i) out[i] = KeyOf(specs, keys[i]);
  return out;
}

// The names of keys, for ExperimentResult::table.
std::vector<std::string> KeyNames(std::span<const FigureKey> keys);

// Appends to figures, in the order of specs, a Figure for each spec that
// has values (samples over trials, or one value). A percentile figure
// ("*p50_ms", "*p90_ms", "*p99_ms") that fewer trials gave than the most
// any figure has is left out: some trials had too few samples for it. A value whose key no spec
// has is a bug in the experiment: it throws std::logic_error, so a test that
// builds the row fails instead of the figure going missing.
void AddFigures(std::vector<Figure>& figures, std::span<const FigureSpec> specs,
                const std::map<std::string, std::vector<double>>& values);
void AddFigures(std::vector<Figure>& figures, std::span<const FigureSpec> specs,
                const std::map<std::string, double>& values);

// A latency distribution, merged over all trials of a row.
struct Latency {
  std::string key;    // "write", "probe"
  std::string label;  // "bystander 4 KiB write+fdatasync"
  std::string includes;
  uint64_t count = 0;
  uint64_t min_ns = 0;
  uint64_t max_ns = 0;
  double mean_ns = 0;
  double stddev_ns = 0;
  std::vector<std::pair<double, uint64_t>> percentiles_ns;  // (percentile, ns)
  // Percentiles finer than the samples support (p99.9 of 12): not given, and
  // why ("needs 1000 samples, 12 recorded").
  std::vector<std::pair<double, std::string>> percentiles_omitted;
  // The histogram's non-empty buckets, in order: the whole distribution.
  struct Bucket {
    uint64_t low_ns = 0;
    uint64_t high_ns = 0;  // inclusive
    uint64_t count = 0;
  };
  std::vector<Bucket> buckets;

  static Latency From(const Histogram& h, std::string key, std::string label, std::string includes);
  std::optional<uint64_t> At(double percentile) const;
};

struct Column {
  std::string name;
  std::string unit;
};

// Values sampled at a fixed interval during one trial. Column 0 is the time
// since the trial started ("t", "s").
struct Series {
  std::string key;  // "timeline", "per_gib"
  int trial = 0;    // 0-based trial (round) index
  double interval_s = 0;
  std::vector<Column> columns;
  std::vector<std::vector<double>> points;
};

enum class RowStatus { kOk, kUnsupported, kFailed };
const char* RowStatusName(RowStatus s);

struct Row {
  std::string name;
  RowStatus status = RowStatus::kOk;
  int error_code = 0;              // errno behind kUnsupported / kFailed
  std::string message;             // "pwritev2 RWF_DONTCACHE: Operation not supported"
  std::vector<std::string> notes;  // "library picked dontcache"
  std::vector<Figure> figures;
  std::vector<Latency> latencies;
  std::vector<Series> series;

  const Figure* FindFigure(const std::string& key) const;
  const Latency* FindLatency(const std::string& key) const;
};

struct Host {
  std::string hostname;
  std::string kernel;   // uname release, e.g. "6.18.44"
  std::string version;  // uname version
  std::string machine;  // "x86_64"
  int cpus = 0;
  uint64_t memory_bytes = 0;
  std::map<std::string, int64_t> vm;  // vm.dirty_* sysctls, as the kernel reports them
  std::string cpu_model;              // /proc/cpuinfo's first "model name" ("" where it has none)
};

struct Target {
  std::string path;     // the directory or file measured
  std::string fs_type;  // "ext4", "tmpfs"
  std::string mount_point;
  std::string mount_source;        // "/dev/vda", "tmpfs"
  std::string mount_options;       // "rw,relatime,..."
  std::string device;              // whole block device under the file system: "vda"; "" if none
  std::vector<std::string> stack;  // how it was found: "vda1 (partition of vda)", "loop0 -> /x.img"
  std::string model;
  std::string firmware;                 // the device's firmware revision, where sysfs has it
  std::string scheduler;                // active scheduler
  std::vector<std::string> schedulers;  // offered
  std::optional<bool> rotational;
  std::optional<uint64_t> logical_block_size;
  std::optional<uint64_t> physical_block_size;
  std::optional<uint64_t> max_sectors_kb;
  std::optional<uint64_t> write_zeroes_max_bytes;        // 0: the device offers no write-zeroes
  std::optional<uint64_t> write_zeroes_unmap_max_bytes;  // 0: FALLOC_FL_WRITE_ZEROES is refused
};

struct ExperimentResult {
  std::string name;               // "stream"
  std::string reproduces;         // one line naming the original experiment
  std::string purpose;            // the survey's step: "streaming past the writeback threshold"
  std::string testbed;            // --testbed SPEC this run was on ("" for the user's directory)
  bool loop_direct_io = false;    // the test bed's loop device ran with direct I/O
  std::string row_label = "row";  // what a row is: "strategy", "step"...
  std::string scheduler;          // --scheduler this run was under ("" when not switched)
  Target target;
  std::vector<Param> params;
  std::vector<std::string> table;  // figure keys for the terminal table, in order
  std::vector<Row> rows;
  std::vector<std::string> notes;
  // With several test beds or schedulers: the figure compared side by side,
  // and whether test beds are the rows (the 2012 prealloc table) or columns.
  std::string compare_figure;
  bool compare_targets_as_rows = false;
  // Under MPI (docs/mpi.md): a rank's own result (rank >= 0), or the
  // aggregate over `ranks` ranks, which comes before the ranks' own.
  int rank = -1;
  int ranks = 0;

  // The row named name, or null.
  const Row* FindRow(const std::string& name) const;
};

// Under MPI: one rank of the run, as rank 0 met it at the start.
struct RankInfo {
  int rank = 0;
  Host host;
  std::string dir;              // the directory it writes in, as it named it
  int64_t clock_offset_ns = 0;  // its clock minus rank 0's (CLOCK_MONOTONIC)...
  uint64_t clock_rtt_ns = 0;    // ...within half this round trip
};

// One recommendation of the survey: the experiment it comes from (a link on
// the report page), the figures it read, and what it says, numbers included.
struct Recommendation {
  std::string experiment;            // "stream"; "" for one about the run as a whole
  std::vector<std::string> figures;  // keys of the figures it read: "mb_s", "probe_p99_ms"
  std::string text;
  // The finding in one short line, as a colleague would say it, with its
  // numbers: what the survey prints first ("" : the text).
  std::string verdict;

  // The verdict, or the text where there is none (documents before it).
  const std::string& Finding() const { return verdict.empty() ? text : verdict; }
};

// The noise canary: a short fixed measurement taken before a run's first
// step, the same in every run (a CPU loop, 4 KiB write + fdatasync calls on
// the run's first target), whose drift between runs on one host marks a run
// made on a disturbed machine (history changes and check say so).
struct Canary {
  std::string where;            // the directory whose file system took the fdatasync calls
  std::vector<Figure> figures;  // cpu_loop_ms, fdatasync_us; empty: not measured
  std::string note;             // what was not measured, and why
};

struct Document {
  int schema_version = kSchemaVersion;
  std::string writelab_version;
  std::string command_line;
  std::string label;  // --label: what compare and the report call this run ("" for host and kernel)
  std::string started_at;  // ISO 8601 UTC
  std::string finished_at;
  Host host;
  std::vector<ExperimentResult> experiments;
  std::vector<std::string> errors;  // why a run stopped early; what was measured is kept
  std::vector<Recommendation> recommendations;  // survey: advice, each with its numbers
  // Under MPI: the library ("Open MPI v4.1.4") and every rank, rank 0 first;
  // empty for a run on one machine.
  std::string mpi_library;
  std::vector<RankInfo> ranks;
  Canary canary;
};

}  // namespace writelab
