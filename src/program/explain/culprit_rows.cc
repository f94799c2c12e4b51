// SPDX-License-Identifier: MIT
// Who made the calls wait, as rows and notes (blame.h): per culprit over
// the run, and per type of call.
#include <fmt/format.h>

#include <algorithm>

#include "core/outcome.h"
#include "core/units.h"
#include "program/explain/figures.h"
#include "program/explain/rows.h"

namespace writelab {
namespace {

// The blocked time of many calls, charged, summed per culprit.
struct BlameSums {
  struct Culprit {
    std::string comm;
    double ms = 0;
    uint64_t calls = 0;
  };
  std::map<CulpritId, Culprit> by;
  double blocked_ms = 0, unattributed_ms = 0;
  uint32_t self = 0;  // the calls' process, while they all have one (0: several)
  bool any = false;

  void Add(const TraceCall& c, const CallBlame& b) {
    if (!any) self = c.tgid;
    if (self != c.tgid) self = 0;
    any = true;
    blocked_ms += b.blocked_ms;
    unattributed_ms += b.unattributed_ms;
    for (const CallBlame::Share& s : b.shares) {
      Culprit& to = by[s.who];
      if (to.comm.empty()) to.comm = s.comm;
      to.ms += s.ms;
      to.calls += s.ms > 0;
    }
  }
  std::vector<std::pair<CulpritId, Culprit>> Ranked() const {
    std::vector<std::pair<CulpritId, Culprit>> out(by.begin(), by.end());
    std::stable_sort(out.begin(), out.end(),
                     [](const auto& a, const auto& b) { return a.second.ms > b.second.ms; });
    return out;
  }
};

double BlamePct(double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0.0; }

// "/data/big 600 MB, /data/log 2.1 MB": a culprit's files, most bytes first.
std::string FilesOf(const ProgramTrace& t, const CulpritWrites& w) {
  std::vector<std::pair<uint64_t, std::pair<uint32_t, uint64_t>>> files;
  for (const auto& [id, bytes] : w.files) files.push_back({bytes, id});
  std::sort(files.rbegin(), files.rend());
  std::string out;
  for (size_t i = 0; i < files.size() && i < 3; ++i)
    out += fmt::format("{}{} {:.1f} MB", i ? ", " : "",
                       FileName(t, files[i].second.first, files[i].second.second),
                       static_cast<double>(files[i].first) / 1e6);
  if (files.size() > 3) out += fmt::format(" and {} more", files.size() - 3);
  return out;
}

}  // namespace

uint32_t CallDisk(const ProgramTrace& t, uint32_t dev) {
  auto d = t.disk_of.find(dev);
  return d == t.disk_of.end() ? 0 : d->second;
}

std::string TypeBlameNote(const ProgramTrace& t, const BlameIndex& index, uint32_t class_id) {
  BlameSums sums;
  for (const TraceCall& c : t.calls)
    if (c.class_id == class_id) sums.Add(c, index.Of(c, CallDisk(t, c.dev)));
  if (sums.blocked_ms <= 0) return "";
  std::string out =
      fmt::format("who made them wait ({:.1f} ms asleep in the delivered calls):", sums.blocked_ms);
  int named = 0;
  for (const auto& [who, c] : sums.Ranked()) {
    if (named++ == 4 || BlamePct(c.ms, sums.blocked_ms) < 0.5) break;
    out += fmt::format(" {} {:.0f}%,", CulpritName(who, c.comm, sums.self),
                       BlamePct(c.ms, sums.blocked_ms));
  }
  if (sums.unattributed_ms > 0)
    out += fmt::format(" not charged {:.0f}%,", BlamePct(sums.unattributed_ms, sums.blocked_ms));
  out.pop_back();
  return out;
}

std::vector<Row> CulpritRows(const ProgramTrace& t) {
  const BlameIndex index(t.windows);
  BlameSums sums;
  for (const TraceCall& c : t.calls) sums.Add(c, index.Of(c, CallDisk(t, c.dev)));
  std::map<CulpritId, std::string> comms;
  for (const auto& [who, c] : sums.by) comms[who] = c.comm;
  for (const auto& [who, w] : t.writes)
    if (!comms.count(who)) comms[who] = w.comm;
  std::vector<std::pair<std::pair<double, uint64_t>, Row>> rows;
  for (const auto& [who, comm] : comms) {
    Row row = MakeRow(CulpritName(who, comm, sums.self), Outcome{});
    std::map<std::string, double> f;
    const auto charged = sums.by.find(who);
    const double ms = charged == sums.by.end() ? 0 : charged->second.ms;
    f[CulpritKey("waited_ms").name] = ms;
    f[CulpritKey("share_pct").name] = BlamePct(ms, sums.blocked_ms);
    f[CulpritKey("calls").name] =
        charged == sums.by.end() ? 0 : static_cast<double>(charged->second.calls);
    const auto wrote = t.writes.find(who);
    const uint64_t bytes = wrote == t.writes.end() ? 0 : wrote->second.bytes;
    f[CulpritKey("written_mb").name] = static_cast<double>(bytes) / 1e6;
    f[CulpritKey("dirtied_mb").name] =
        wrote == t.writes.end() ? 0 : static_cast<double>(wrote->second.dirtied) / 1e6;
    AddFigures(row.figures, kCulpritFigures, f);
    if (wrote != t.writes.end() && !wrote->second.files.empty())
      row.notes.push_back("files: " + FilesOf(t, wrote->second));
    rows.push_back({{ms, bytes}, std::move(row)});
  }
  if (sums.unattributed_ms > 0) {
    Row row = MakeRow("not charged", Outcome{});
    std::map<std::string, double> f{
        {CulpritKey("waited_ms").name, sums.unattributed_ms},
        {CulpritKey("share_pct").name, BlamePct(sums.unattributed_ms, sums.blocked_ms)}};
    AddFigures(row.figures, kCulpritFigures, f);
    row.notes.push_back(
        "asleep on something no write explains: dirty throttling, other sleep, or a commit, "
        "flush or queue with no write charged in it");
    rows.push_back({{sums.unattributed_ms, 0}, std::move(row)});
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<Row> out;
  for (auto& [key, row] : rows) out.push_back(std::move(row));
  return out;
}

}  // namespace writelab
