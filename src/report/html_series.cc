// SPDX-License-Identifier: MIT
// The report's charts of series (values over time, per iteration, per GiB):
// which are drawn, what they are called, and which stay open on the page.
//
// A timeline is worth a chart of its own only where it shows what a table
// cannot: the row lasted long enough to have a shape (at least 1 s and 20
// samples; for a series over iterations or GiB, 20 points). Shorter ones
// are still drawn, folded away under the experiment's "more charts"
// (html.cc); so are each row's device counters, which the row's table
// already sums. Legends and axes say what a column is ("Dirty", "written
// to the device"), never its key.
#include <algorithm>
#include <cmath>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "report/html_plan.h"

namespace writelab {

using nlohmann::json;

namespace {

using spec::Axis;
using spec::Chart;
using spec::Dataset;
using spec::YAxisFor;

// What each column of the series experiments write is, for a person. A
// column not listed is named by its key with spaces for underscores.
struct ColumnName {
  const char* key;
  const char* label;
};
constexpr ColumnName kColumnNames[] = {
    {"t", "time"},
    {"throughput", "writer throughput"},
    {"written", "written by the writer"},
    {"dirty", "Dirty (page cache)"},
    {"writeback", "Writeback (page cache)"},
    {"cached", "page cache"},
    {"device_writes", "device writes completed"},
    {"device_write_merges", "device write merges"},
    {"device_written", "written to the device"},
    {"device_in_flight", "device requests in flight"},
    {"gib", "GiB written"},
    {"fdatasync", "bystander fdatasync"},
    {"write", "write"},
    {"sync", "sync"},
};

// What a series key is about, in a title: "over time".
constexpr ColumnName kSeriesNames[] = {
    {"timeline", "over time"},
    {"probe", "over time"},
    {"iterations", "per iteration"},
    {"per_gib", "per GiB written"},
    {"request_sizes", "requests per size"},
    {"intervals", "per interval"},
};

std::string Lookup(std::span<const ColumnName> table, const std::string& key) {
  for (const ColumnName& n : table)
    if (key == n.key) return n.label;
  std::string out = key;
  std::replace(out.begin(), out.end(), '_', ' ');
  return out;
}

std::string AxisTitle(const Column& c) {
  const std::string name = ColumnLabel(c.name);
  return c.unit.empty() ? name : name + " (" + c.unit + ")";
}

// Points (x, column) of one series; non-finite values are left out.
json XY(const Series& s, size_t column) {
  json data = json::array();
  for (const auto& p : s.points)
    if (p.size() > column && std::isfinite(p[0]) && std::isfinite(p[column]))
      data.push_back(json::array({p[0], p[column]}));
  return data;
}

// A line needs this many points to be drawn at all: a timeline of 2
// samples over a 0.5 s row says nothing. Per GiB: more than two.
size_t kMinPoints(const std::string& key) { return key == "per_gib" ? 3 : 5; }

// Rows beyond which each row's own telemetry charts are left out (stride's
// steps): the comparison chart and the tables still show every row.
constexpr size_t kMaxRowCharts = 8;

// Whether a series has a shape worth a chart of its own (see the top).
bool HasShape(const Series& s) {
  if (s.points.size() < 20) return false;
  if (s.columns.empty() || s.columns[0].unit != "s") return true;
  return s.points.back().front() - s.points.front().front() >= 1.0 ||
         s.points.back().front() >= 1.0;
}

// The first trial's series of each row with the given key.
std::vector<std::pair<const Row*, const Series*>> FirstTrials(const ExperimentResult& e,
                                                              const std::string& key) {
  std::vector<std::pair<const Row*, const Series*>> out;
  for (const Row& r : e.rows) {
    const Series* first = nullptr;
    for (const Series& s : r.series)
      if (s.key == key && (!first || s.trial < first->trial)) first = &s;
    if (first && !first->columns.empty() && first->points.size() >= kMinPoints(key))
      out.push_back({&r, first});
  }
  return out;
}

// "The first of 5 trials. " when there were several.
std::string TrialsNote(const ExperimentResult& e, const std::string& key) {
  int trials = 0;
  for (const Row& r : e.rows)
    for (const Series& s : r.series)
      if (s.key == key) trials = std::max(trials, s.trial + 1);
  return trials > 1 ? "The first of " + std::to_string(trials) + " trials. " : "";
}

// What to look at in a chart of these columns.
std::string LookFor(const std::vector<std::string>& columns) {
  auto has = [&](const char* k) {
    return std::find(columns.begin(), columns.end(), k) != columns.end();
  };
  if (has("dirtied") && has("throttled"))
    return "Look for a writer's dirtied MB/s held down while its throttled ms climb (it reached "
           "the dirty limit), and for a process's waits on others rising with another's "
           "written MB/s.";
  if (has("dirty") || has("writeback"))
    return "Look for Dirty climbing to the writeback threshold and the writer's throughput "
           "dropping when it does; page cache is what the file leaves behind.";
  if (has("device_in_flight") || has("device_writes"))
    return "The device's side: requests completed and merged per interval, and how many were "
           "in flight; a queue that stays full while throughput falls is the device's limit.";
  if (has("fdatasync"))
    return "Each point is one small fdatasync of a bystander: spikes are its stalls behind the "
           "writer's writeback.";
  if (has("sync") || has("write"))
    return "Each point is one iteration: a sync that grows with the background load is the "
           "stall fsync-tester measured.";
  return "Compare the rows' levels and look for steps or stalls.";
}

void MarkFold(json& c, bool open, const std::string& why) {
  c["fold"] = !open;
  if (!open) c["fold_why"] = why;
}

}  // namespace

std::string ColumnLabel(const std::string& key) { return Lookup(kColumnNames, key); }

void DropZeroSeries(json& c) {
  const bool category = c["x"]["type"] == "category";
  auto zero = [&](const json& d) {
    if (d.contains("marks") || d.contains("band") || d.contains("changes")) return false;
    size_t values = 0;
    for (const json& v : d["data"]) {
      const json& n = category ? v : v[1];
      if (n.is_null()) continue;
      if (!n.is_number() || n.get<double>() != 0) return false;
      ++values;
    }
    for (const char* k : {"lo", "hi"})
      if (d.contains(k))
        for (const json& n : d[k])
          if (n.is_number() && n.get<double>() != 0) return false;
    return values > 0;
  };
  std::vector<std::string> dropped;
  json kept = json::array();
  for (json& d : c["datasets"]) {
    if (zero(d))
      dropped.push_back(d["label"]);
    else
      kept.push_back(std::move(d));
  }
  c["datasets"] = std::move(kept);
  if (dropped.empty()) return;
  json axes = json::array();  // an axis left without a line is not drawn either
  for (json& a : c["y"])
    if (std::any_of(c["datasets"].begin(), c["datasets"].end(),
                    [&](const json& d) { return d["axis"] == a["id"]; }))
      axes.push_back(std::move(a));
  c["y"] = std::move(axes);
  std::string list;
  for (const std::string& name : dropped) list += (list.empty() ? "" : ", ") + name;
  c["zero"] = dropped;
  std::string caption = c.value("caption", "");
  c["caption"] = caption + (caption.empty() ? "" : " ") + "Not drawn, 0 throughout: " + list + ".";
}

void AddSeriesCharts(const ExperimentResult& e, const std::string& run, std::vector<json>& out) {
  std::vector<std::string> keys;
  for (const Row& r : e.rows)
    for (const Series& s : r.series)
      if (std::find(keys.begin(), keys.end(), s.key) == keys.end()) keys.push_back(s.key);
  for (const std::string& key : keys) {
    auto rows = FirstTrials(e, key);
    if (rows.empty()) continue;
    const Series& shape = *rows.front().second;
    size_t width = shape.columns.size();
    if (width < 2) continue;
    const std::string trials = TrialsNote(e, key);
    const std::string short_why = "rows shorter than 1 s or of fewer than 20 samples";
    // Rows side by side on the first value column.
    if (rows.size() > 1 || width == 2) {
      json c = Chart(e.name + ": " + ColumnLabel(shape.columns[1].name) + " per " + e.row_label +
                         ", " + Lookup(kSeriesNames, key) + " — " + run,
                     "line", Axis("x", AxisTitle(shape.columns[0]), "linear"));
      std::string y =
          YAxisFor(c, shape.columns[1].unit, "linear", ColumnLabel(shape.columns[1].name));
      bool any_shape = false;
      for (const auto& [r, s] : rows) {
        c["datasets"].push_back(Dataset(r->name, y, XY(*s, 1)));
        any_shape |= HasShape(*s);
      }
      c["caption"] = trials + LookFor({shape.columns[1].name});
      MarkFold(c, any_shape, short_why);
      out.push_back(std::move(c));
    }
    if (width == 2 || rows.size() > kMaxRowCharts) continue;
    // Each row with all its columns: a chart per two units (a y axis each on
    // the left and right), so throughput shares a chart with Dirty/Writeback.
    std::vector<std::string> units;
    for (size_t i = 1; i < width; ++i)
      if (std::find(units.begin(), units.end(), shape.columns[i].unit) == units.end())
        units.push_back(shape.columns[i].unit);
    for (const auto& [r, s] : rows) {
      for (size_t u = 0; u < units.size(); u += 2) {
        json c = Chart(e.name + ": " + r->name + " " + Lookup(kSeriesNames, key) + " — " + run,
                       "line", Axis("x", AxisTitle(s->columns[0]), "linear"));
        std::vector<std::string> names;
        for (size_t i = 1; i < s->columns.size(); ++i) {
          const std::string& unit = s->columns[i].unit;
          if (unit != units[u] && (u + 1 >= units.size() || unit != units[u + 1])) continue;
          c["datasets"].push_back(
              Dataset(ColumnLabel(s->columns[i].name), YAxisFor(c, unit), XY(*s, i)));
          names.push_back(s->columns[i].name);
        }
        if (c["datasets"].empty()) continue;
        c["caption"] = trials + LookFor(names);
        // The device's counters: the row's table sums them already.
        if (u > 0)
          MarkFold(c, false, "each row's device counters");
        else
          MarkFold(c, HasShape(*s), short_why);
        out.push_back(std::move(c));
      }
    }
  }
}

}  // namespace writelab
