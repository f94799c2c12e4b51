// SPDX-License-Identifier: MIT
// `writelab top`'s document: "top", a row per process over the run with
// every interval as a series, and "top-stalls", a row per victim <- culprit
// pair (docs/results.md, "top documents").
#include "program/top/results.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/outcome.h"
#include "program/top/screen.h"

namespace writelab {
namespace {

double TopPct(uint64_t part, uint64_t whole) {
  return whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

// Every interval in which a process did something: its rates, its throttling,
// its durability calls (the slowest of the interval) and its waits on others.
Series ProcessSeries(uint32_t tgid, const std::vector<TopInterval>& intervals, uint64_t start_ns) {
  Series s;
  s.key = "intervals";
  s.columns = {{"t", "s"},           {"dirtied", "MB/s"}, {"written", "MB/s"}, {"throttled", "ms"},
               {"syncs", "calls/s"}, {"sync_max", "ms"},  {"waited", "ms"}};
  for (const TopInterval& iv : intervals) {
    if (s.interval_s == 0) s.interval_s = iv.seconds();
    auto p = iv.processes.find(tgid);
    if (p == iv.processes.end()) continue;
    const double secs = iv.seconds() > 0 ? iv.seconds() : 1.0;
    const TopProcess& x = p->second;
    s.points.push_back({static_cast<double>(iv.t1_ns - start_ns) / 1e9,
                        static_cast<double>(x.dirtied) / 1e6 / secs,
                        static_cast<double>(x.written) / 1e6 / secs, x.throttled_ms,
                        static_cast<double>(x.syncs) / secs,
                        static_cast<double>(x.sync_max_ns) / 1e6, x.waited_ms});
  }
  return s;
}

Row ProcessRow(uint32_t tgid, const TopProcess& p, double seconds, const TopTally& tally,
               uint64_t start_ns) {
  Row row = MakeRow(fmt::format("{} (pid {})", p.comm, tgid), Outcome{});
  std::map<std::string, double> f{
      {"dirtied_mb", static_cast<double>(p.dirtied) / 1e6},
      {"dirtied_mb_s", static_cast<double>(p.dirtied) / 1e6 / seconds},
      {"written_mb", static_cast<double>(p.written) / 1e6},
      {"written_mb_s", static_cast<double>(p.written) / 1e6 / seconds},
      {"dirty_mb",
       std::max(0.0, static_cast<double>(p.dirtied) - static_cast<double>(p.written_cached)) / 1e6},
      {"throttled_ms", p.throttled_ms},
      {"syncs", static_cast<double>(p.syncs)},
      {"waited_ms", p.waited_ms},
      {"caused_ms", p.caused_ms}};
  if (p.syncs) {
    f["sync_ms"] = static_cast<double>(p.sync_ns) / 1e6;
    f["sync_max_ms"] = static_cast<double>(p.sync_max_ns) / 1e6;
    if (p.sync_p99_ms) f["sync_p99_ms"] = *p.sync_p99_ms;
    static constexpr std::pair<const char*, int> kParts[] = {
        {"cpu_pct", SPLIT_CPU},         {"runq_pct", SPLIT_RUNQ},
        {"journal_pct", SPLIT_JOURNAL}, {"writeback_pct", SPLIT_WRITEBACK},
        {"flush_pct", SPLIT_FLUSH},     {"other_pct", SPLIT_OTHER}};
    for (const auto& [key, part] : kParts) f[key] = TopPct(p.sync_part_ns[part], p.sync_ns);
  }
  AddFigures(row.figures, kTopFigures, f);
  row.series.push_back(ProcessSeries(tgid, tally.Intervals(), start_ns));
  return row;
}

std::vector<Row> StallRows(const TopTally& tally) {
  std::map<uint32_t, double> blocked;  // per victim, all charged
  for (const auto& [k, s] : tally.RunStalls()) blocked[k.victim] += s.ms;
  std::map<TopStallKey, double> worst;  // per pair, its most in one interval
  for (const TopInterval& iv : tally.Intervals())
    for (const auto& [k, s] : iv.stalls) worst[k] = std::max(worst[k], s.ms);
  std::vector<std::pair<double, Row>> rows;
  for (const auto& [k, s] : tally.RunStalls()) {
    Row row = MakeRow(TopStallName(k, s), Outcome{});
    AddFigures(row.figures, kTopStallFigures,
               std::map<std::string, double>{
                   {"ms", s.ms},
                   {"share_pct", blocked[k.victim] > 0 ? 100.0 * s.ms / blocked[k.victim] : 0},
                   {"calls", static_cast<double>(s.calls)},
                   {"max_interval_ms", worst[k]}});
    rows.push_back({s.ms, std::move(row)});
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<Row> out;
  for (auto& [ms, r] : rows) out.push_back(std::move(r));
  return out;
}

}  // namespace

void FillTopDocument(const TopSpec& spec, const TopTally& tally, uint64_t start_ns, uint64_t end_ns,
                     const std::vector<std::string>& notes, Document& doc) {
  const double seconds = end_ns > start_ns ? static_cast<double>(end_ns - start_ns) / 1e9 : 1.0;
  ExperimentResult procs;
  procs.name = kTopName;
  procs.reproduces = kTopReproduces;
  procs.row_label = "process";
  procs.params = {{"duration", seconds, "s"},
                  {"interval", static_cast<double>(spec.interval_ns) / 1e9, "s"}};
  procs.table = KeyNames(
      KeysOf(kTopFigures, {"dirtied_mb_s", "written_mb_s", "dirty_mb", "throttled_ms", "syncs",
                           "sync_p99_ms", "sync_max_ms", "waited_ms", "caused_ms"}));
  procs.compare_figure = TopKey("dirtied_mb").name;
  const std::map<uint32_t, TopProcess> run = tally.Run();
  std::vector<std::pair<double, uint32_t>> order;
  for (const auto& [tgid, p] : run)
    if (double a = TopActivity(p); a > 0) order.push_back({a, tgid});
  std::sort(order.rbegin(), order.rend());
  for (const auto& [activity, tgid] : order)
    procs.rows.push_back(ProcessRow(tgid, run.at(tgid), seconds, tally, start_ns));
  procs.notes = notes;

  ExperimentResult stalls;
  stalls.name = kTopStallsName;
  stalls.row_label = "victim <- culprit";
  stalls.table =
      KeyNames(KeysOf(kTopStallFigures, {"ms", "share_pct", "calls", "max_interval_ms"}));
  stalls.compare_figure = TopStallKeyOf("ms").name;
  stalls.rows = StallRows(tally);
  stalls.notes = {
      "each durability call's (and each call of 1 ms or more) sleep for a journal commit, a cache "
      "flush or its writes charged to the processes whose writes that commit, flush or queue "
      "carried, by bytes; dirty throttling to who held pages dirty or under writeback on its "
      "file system when it began; \"self\": the victim's own writes"};
  doc.experiments.push_back(std::move(procs));
  doc.experiments.push_back(std::move(stalls));
}

}  // namespace writelab
