// SPDX-License-Identifier: MIT
#include "report/text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "core/units.h"
#include "explain/figures.h"
#include "mpi/figures.h"

namespace writelab {
namespace {

std::string TextCell(const Figure& f) {
  const Summary& s = f.value;
  if (f.unit == "MB/s") {  // the column header names the unit
    if (s.n < 2 || s.min == s.max) return fmt::format("{:.0f}", s.median);
    return fmt::format("{:.0f} ({:.0f}-{:.0f})", s.median, s.min, s.max);
  }
  std::string text = FormatValue(s.median, f.unit);
  if (s.n < 2 || s.min == s.max) return text;
  std::string lo = FormatValue(s.min, f.unit), hi = FormatValue(s.max, f.unit);
  if (lo == hi) return text;  // differences below the printed precision
  // "494 MB/s (411-1853)": drop the unit from the range when all three share it.
  auto unit_of = [](const std::string& v) { return v.substr(v.rfind(' ') + 1); };
  if (unit_of(lo) == unit_of(text) && unit_of(hi) == unit_of(text) &&
      lo.find(' ') != std::string::npos) {
    lo.resize(lo.rfind(' '));
    hi.resize(hi.rfind(' '));
  }
  return text + " (" + lo + "-" + hi + ")";
}

std::string ParamText(const Param& p) {
  std::string v = std::visit(
      [&](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, bool>)
          return x ? "yes" : "no";
        else if constexpr (std::is_same_v<T, std::string>)
          return x;
        else if (p.unit == "bytes")
          return FormatBytes(static_cast<double>(x));
        else
          return fmt::format("{}{}", x, p.unit.empty() ? "" : " " + p.unit);
      },
      p.value);
  return p.key + " " + v;
}

std::string LatencyTable(const ExperimentResult& e) {
  TextTable table({"latency", "count", "min", "p50", "p90", "p99", "p99.9", "max"});
  bool any = false;
  for (const Row& r : e.rows) {
    for (const Latency& l : r.latencies) {
      auto at = [&](double p) {
        return l.At(p) ? FormatNs(static_cast<double>(*l.At(p))) : std::string(kNotMeasured);
      };
      table.AddRow({r.name + " " + l.label, std::to_string(l.count),
                    FormatNs(static_cast<double>(l.min_ns)), at(50), at(90), at(99), at(99.9),
                    FormatNs(static_cast<double>(l.max_ns))});
      any = true;
    }
  }
  return any ? table.Render() : "";
}

// The fall-off Garzik saw: MB/s of each GiB written, median over trials.
// Shown when some row wrote more than one GiB.
std::string PerGibTable(const ExperimentResult& e) {
  size_t width = 0;
  for (const Row& r : e.rows)
    for (const Series& s : r.series)
      if (s.key == "per_gib") width = std::max(width, s.points.size());
  if (width < 2) return "";
  std::vector<std::string> header = {"MB/s in GiB"};
  for (size_t i = 1; i <= width; ++i) header.push_back(std::to_string(i));
  TextTable table(header);
  for (const Row& r : e.rows) {
    std::vector<std::vector<double>> per(width);
    for (const Series& s : r.series)
      if (s.key == "per_gib")
        for (size_t i = 0; i < s.points.size(); ++i) per[i].push_back(s.points[i][1]);
    if (per[0].empty()) continue;
    std::vector<std::string> cells = {r.name};
    for (auto& v : per)
      cells.push_back(v.empty() ? "-" : fmt::format("{:.0f}", Summarize(v).median));
    table.AddRow(std::move(cells));
  }
  return table.Render() + "  (write phase only; the last GiB may be partial)\n";
}

bool ParamIsTrue(const ExperimentResult& e, const std::string& key) {
  for (const Param& p : e.params)
    if (p.key == key) return std::holds_alternative<bool>(p.value) && std::get<bool>(p.value);
  return false;
}

// The per-iteration listing in the original fsync-tester's shape, one block
// per row: "write time: 0.0021s fsync time: 0.2815s".
std::string IterationListing(const ExperimentResult& e) {
  if (!ParamIsTrue(e, "listing")) return "";
  std::string out;
  for (const Row& r : e.rows) {
    const Latency* sync = r.FindLatency("sync");  // its label names the sync call
    const bool separate = sync != nullptr;
    bool named = false;
    for (const Series& it : r.series) {  // every round's, in order
      if (it.key != "iterations" || it.points.empty()) continue;
      if (!named) out += Printable(r.name) + ":\n";
      named = true;
      for (const auto& p : it.points) {
        out += fmt::format("write time: {:.4f}s", p[1]);
        out += separate ? fmt::format(" {} time: {:.4f}s\n", sync->label, p[2])
                        : " (includes the sync)\n";
      }
    }
  }
  return out;
}

}  // namespace

// A column's header: the figure's label, and its unit where the cells do not
// print one ("journal commit (%)", "bytes (MB)").
std::string ColumnHeader(const Figure& f) {
  const bool cells_say_it = f.unit == "bytes" || f.unit == "s" || f.unit == "ms";
  if (cells_say_it || f.unit.empty() || f.label.find(f.unit) != std::string::npos) return f.label;
  return f.label + " (" + f.unit + ")";
}

std::string TargetLine(const Target& t) {
  std::string line = t.path + ": " + (t.fs_type.empty() ? "unknown file system" : t.fs_type);
  if (!t.mount_source.empty()) line += " from " + t.mount_source;
  if (!t.device.empty()) {
    line += ", device " + t.device;
    if (!t.model.empty()) line += " (" + t.model + ")";
    if (!t.scheduler.empty()) line += ", scheduler " + t.scheduler;
    if (t.rotational) line += *t.rotational ? ", rotational" : ", non-rotational";
    if (t.logical_block_size)
      line += fmt::format(", {}-byte logical blocks", *t.logical_block_size);
  } else {
    line += ", no block device";
  }
  return line;
}

void TextTable::AddRow(std::vector<std::string> cells) {
  for (std::string& c : cells) c = Printable(c);
  rows_.push_back(std::move(cells));
}

// --explain: one line per row that has attribution figures.
static std::string WhereTheTimeWentBlock(const ExperimentResult& e) {
  std::string block;
  for (const Row& r : e.rows)
    if (std::string line = WhereTheTimeWent(r); !line.empty())
      block += fmt::format("  {}: {}\n", Printable(r.name), line);
  return block.empty() ? "" : "\nwhere the time went (--explain):\n" + block;
}

// Terminal columns of UTF-8 text ("—", "µs"): its code points, as fmt pads.
static size_t Columns(const std::string& s) {
  return static_cast<size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

std::string TextTable::Render() const {
  std::vector<size_t> width(header_.size(), 0);
  auto widen = [&](const std::vector<std::string>& cells) {
    for (size_t i = 0; i < cells.size() && i < width.size(); ++i)
      width[i] = std::max(width[i], Columns(cells[i]));
  };
  auto spans = [&](const std::vector<std::string>& r) {
    return r.size() == 2 && header_.size() > 2;  // "name  message" across the columns
  };
  widen(header_);
  for (const auto& r : rows_)
    if (!spans(r)) widen(r);
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (size_t i = 0; i < cells.size() && i < width.size(); ++i) {
      if (i == 0)
        out += fmt::format("{:<{}}", cells[i], width[i]);
      else
        out += fmt::format("  {:>{}}", cells[i], width[i]);
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line(header_);
  for (const auto& r : rows_) {
    if (spans(r)) {
      out += fmt::format("{:<{}}  {}\n", r[0], width[0], r[1]);
      continue;
    }
    out += line(r);
  }
  return out;
}

std::string RenderExperimentText(const ExperimentResult& e) {
  std::string out = e.reproduces.empty()
                        ? fmt::format("writelab {}:\n", e.name)  // one of a run's results
                        : fmt::format("writelab {}: reproduces {}\n", e.name, e.reproduces);
  if (!e.purpose.empty()) out += "step: " + e.purpose + "\n";
  if (e.ranks > 0)
    out +=
        fmt::format("ranks: the aggregate of {} measuring rank{} (each rank's own rows follow)\n",
                    e.ranks, e.ranks == 1 ? "" : "s");
  if (!e.testbed.empty())
    out += "test bed: " + e.testbed +
           (e.target.device.empty() ? ""
            : e.loop_direct_io      ? ", loop with direct I/O"
                               : ", loop without direct I/O (the backing file system refused it)") +
           "\n";
  if (!e.scheduler.empty()) out += "scheduler: " + e.scheduler + " (switched for this run)\n";
  if (!e.target.path.empty() || !e.target.fs_type.empty())  // `top` has none: the whole machine
    out += "target: " + TargetLine(e.target) + "\n";
  std::string params;
  for (const Param& p : e.params) {
    auto* str = std::get_if<std::string>(&p.value);
    if (str && str->empty()) continue;  // an option not given
    params += (params.empty() ? "" : ", ") + ParamText(p);
  }
  out += params.empty() ? "\n" : "parameters: " + params + "\n\n";

  out += IterationListing(e);
  if (ParamIsTrue(e, "listing")) out += "\n";
  // The table's columns: those some row has (a background's MB/s without
  // a background is no column).
  std::vector<std::string> keys;
  for (const std::string& key : e.table)
    if (std::any_of(e.rows.begin(), e.rows.end(),
                    [&](const Row& r) { return r.FindFigure(key) != nullptr; }))
      keys.push_back(key);
  if (keys.empty()) keys = e.table;
  std::vector<std::string> header = {e.row_label};
  std::vector<const Figure*> legend(keys.size(), nullptr);
  for (const std::string& key : keys) header.push_back(key);
  for (const Row& r : e.rows)
    for (size_t i = 0; i < keys.size(); ++i)
      if (const Figure* f = r.FindFigure(keys[i])) {
        header[i + 1] = ColumnHeader(*f);
        legend[i] = f;
      }
  TextTable table(header);
  for (const Row& r : e.rows) {
    if (r.status != RowStatus::kOk) {
      table.AddRow({r.name, std::string(RowStatusName(r.status)) + ": " + r.message});
      continue;
    }
    std::vector<std::string> cells = {r.name};
    for (const std::string& key : keys) {
      const Figure* f = r.FindFigure(key);
      cells.push_back(f ? TextCell(*f) : kNotMeasured);
    }
    table.AddRow(std::move(cells));
  }
  out += table.Render();
  int trials = 0;
  for (const Row& r : e.rows)
    for (const Figure& f : r.figures) trials = std::max(trials, f.value.n);
  if (trials > 1)
    out += fmt::format("\nEach cell: median of {} trials, (min-max) when they differ.\n", trials);
  else
    out += "\nFigures:\n";
  for (const Figure* f : legend)
    if (f) out += fmt::format("  {}: {}\n", f->label, f->includes);
  if (std::string gib = PerGibTable(e); !gib.empty()) out += "\n" + gib;
  if (std::string lat = LatencyTable(e); !lat.empty()) out += "\n" + lat;
  out += WhereTheTimeWentBlock(e);
  for (const Row& r : e.rows)
    for (const std::string& n : r.notes) out += Printable(r.name) + ": " + Printable(n) + "\n";
  for (const std::string& n : e.notes) out += "note: " + Printable(n) + "\n";
  return out;
}

std::string HostLine(const Host& h) {
  std::string line =
      fmt::format("{}, Linux {} {}, {} CPUs, {} memory", h.hostname, h.kernel, h.machine, h.cpus,
                  FormatBytes(static_cast<double>(h.memory_bytes)));
  for (const auto& [knob, value] : h.vm) line += fmt::format(", vm.{} {}", knob, value);
  return line;
}

namespace {

std::string TargetLabel(const ExperimentResult& e) {
  std::string label = !e.purpose.empty()  ? e.purpose
                      : e.testbed.empty() ? e.target.path
                                          : e.testbed;
  if (e.ranks > 0) label += fmt::format(" ({} rank{})", e.ranks, e.ranks == 1 ? "" : "s");
  return e.scheduler.empty() ? label : label + "/" + e.scheduler;
}

// Under MPI: the ranks of the run, one line each.
std::string RanksBlock(const Document& doc) {
  if (doc.ranks.empty()) return "";
  std::string out = fmt::format("ranks: {} under MPI ({})\n", doc.ranks.size(), doc.mpi_library);
  for (const RankInfo& r : doc.ranks)
    out += r.rank == 0
               ? fmt::format("  rank 0: {}, Linux {}, {} CPUs, {}; the clock of reference\n",
                             r.host.hostname, r.host.kernel, r.host.cpus, r.dir)
               : fmt::format(
                     "  rank {}: {}, Linux {}, {} CPUs, {}; clock {:+.1f} us against rank 0 "
                     "(+-{:.1f} us)\n",
                     r.rank, r.host.hostname, r.host.kernel, r.host.cpus, r.dir,
                     static_cast<double>(r.clock_offset_ns) / 1e3,
                     static_cast<double>(r.clock_rtt_ns) / 2e3);
  return out;
}

// Under MPI, after an aggregate: each rank's own figure per row, a line per
// rank (its full rows are in the JSON). The figure is the one its rows are
// compared by (its table's first otherwise).
std::string PerRankTable(const std::vector<const ExperimentResult*>& ranks,
                         const std::vector<RankInfo>& info) {
  if (ranks.empty()) return "";
  const ExperimentResult& first = *ranks.front();
  std::string key = first.compare_figure;
  if (key.empty() && !first.table.empty())  // a throughput where the table has one
    key = std::find(first.table.begin(), first.table.end(), RanksKey("mb_s").name) !=
                  first.table.end()
              ? RanksKey("mb_s").name
              : first.table.front();
  std::vector<std::string> header = {"rank"};
  std::string label = key;
  for (const Row& r : first.rows) {
    header.push_back(r.name);
    if (const Figure* f = r.FindFigure(key))
      label =
          f->label.find(f->unit) != std::string::npos ? f->label : f->label + " (" + f->unit + ")";
  }
  TextTable t(header);
  std::string notes;
  for (const ExperimentResult* e : ranks) {
    std::string host;
    for (const RankInfo& i : info)
      if (i.rank == e->rank) host = " (" + i.host.hostname + ")";
    std::vector<std::string> cells = {"rank " + std::to_string(e->rank) + host};
    for (const Row& name : first.rows) {
      std::string cell = kNotMeasured;
      for (const Row& r : e->rows) {
        if (r.name != name.name) continue;
        const Figure* f = r.FindFigure(key);
        if (const Figure* bg = r.FindFigure(RanksKey("bg_mb_s").name);
            !f && bg) {  // an fsync background rank
          cell = FormatValue(bg->value.median, bg->unit) + " (background)";
          continue;
        }
        cell = r.status != RowStatus::kOk ? RowStatusName(r.status)
               : f                        ? FormatValue(f->value.median, f->unit)
                                          : std::string(kNotMeasured);
      }
      cells.push_back(cell);
    }
    t.AddRow(std::move(cells));
    for (const std::string& n : e->notes)
      if (n.starts_with("a background rank") || n.starts_with("only rank 0"))
        notes += fmt::format("note: rank {}: {}\n", e->rank, n);
  }
  return first.name + " per rank: " + label + "\n" + t.Render() + notes;
}

// One experiment run on several test beds or schedulers: its compared
// figure side by side, a column per target (or a row per target, as the
// 2012 prealloc table).
std::string CrossTable(const std::vector<const ExperimentResult*>& runs) {
  const ExperimentResult& first = *runs.front();
  std::string key = first.compare_figure.empty() ? first.table.front() : first.compare_figure;
  std::vector<std::string> row_names;
  for (const Row& r : first.rows) row_names.push_back(r.name);
  auto cell = [&](const ExperimentResult& e, const std::string& row) -> std::string {
    for (const Row& r : e.rows) {
      if (r.name != row) continue;
      if (r.status != RowStatus::kOk) return RowStatusName(r.status);
      const Figure* f = r.FindFigure(key);
      return f ? FormatValue(f->value.median, f->unit) : kNotMeasured;
    }
    return kNotMeasured;
  };
  std::string label = key;
  for (const Row& r : first.rows)
    if (const Figure* f = r.FindFigure(key))
      label = f->label.ends_with("(" + f->unit + ")") ? f->label : f->label + " (" + f->unit + ")";
  std::vector<std::string> header = {first.compare_targets_as_rows ? "target" : first.row_label};
  if (first.compare_targets_as_rows) {
    header.insert(header.end(), row_names.begin(), row_names.end());
    TextTable t(header);
    for (const ExperimentResult* e : runs) {
      std::vector<std::string> cells = {TargetLabel(*e)};
      for (const std::string& row : row_names) cells.push_back(cell(*e, row));
      t.AddRow(std::move(cells));
    }
    return first.name + " side by side: " + label + "\n" + t.Render();
  }
  for (const ExperimentResult* e : runs) header.push_back(TargetLabel(*e));
  TextTable t(header);
  for (const std::string& row : row_names) {
    std::vector<std::string> cells = {row};
    for (const ExperimentResult* e : runs) cells.push_back(cell(*e, row));
    t.AddRow(std::move(cells));
  }
  return first.name + " side by side: " + label + "\n" + t.Render();
}

}  // namespace

std::string RenderText(const Document& doc) {
  std::string out =
      (doc.label.empty() ? "" : "run: " + doc.label + "\n") + "host: " + HostLine(doc.host) + "\n";
  out += RanksBlock(doc);
  // Under MPI the ranks' own results follow their aggregate, which shows
  // them as a line each in its per-rank table.
  for (size_t i = 0; i < doc.experiments.size(); ++i) {
    const ExperimentResult& e = doc.experiments[i];
    out += RenderExperimentText(e) + "\n";
    if (e.ranks == 0) continue;
    std::vector<const ExperimentResult*> ranks;
    while (i + 1 < doc.experiments.size() && doc.experiments[i + 1].rank >= 0)
      ranks.push_back(&doc.experiments[++i]);
    if (!ranks.empty()) out += PerRankTable(ranks, doc.ranks) + "\n";
  }
  std::map<std::string, std::vector<const ExperimentResult*>> by_name;
  for (const ExperimentResult& e : doc.experiments)
    if (!e.table.empty() && e.rank < 0) by_name[e.name].push_back(&e);
  for (const auto& [name, runs] : by_name)
    if (runs.size() > 1) out += CrossTable(runs) + "\n";
  if (!doc.recommendations.empty()) {
    out += "Recommendations (from the numbers above):\n";
    for (const Recommendation& r : doc.recommendations) out += "- " + r.text + "\n";
  }
  for (const std::string& err : doc.errors) out += "error: " + err + "\n";
  return Printable(out, true);  // names from the system (a device's model) included
}

}  // namespace writelab
