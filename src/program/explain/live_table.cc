// SPDX-License-Identifier: MIT
#include "program/explain/live_table.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/units.h"
#include "program/explain/rows.h"

namespace writelab {
namespace {

double ShareOf(uint64_t part, uint64_t total) {
  return total ? 100.0 * static_cast<double>(part) / static_cast<double>(total) : 0.0;
}

// The parts' columns, in split_parts.h's order.
constexpr const char* kPartColumns[SPLIT_PARTS] = {"cpu",   "cpu wait",  "journal", "its writes",
                                                   "flush", "throttled", "other"};

std::string PercentileText(const Histogram& h, double p) {
  auto v = h.SupportedPercentile(p);
  return v ? FormatValue(static_cast<double>(*v) / 1e6, "ms") : std::string("-");
}

}  // namespace

std::vector<std::string> LiveTable::Update(const std::vector<TraceFile>& files,
                                           const std::vector<trace_hist>& hists,
                                           uint64_t elapsed_ns, uint64_t since_ns) {
  std::map<uint32_t, Sums> now;
  for (const TraceFile& f : files) {
    Sums& s = now[f.key.class_id];
    s.calls += f.stats.calls, s.ns += f.stats.ns;
    for (int i = 0; i < SPLIT_PARTS; ++i) s.part_ns[i] += f.stats.part_ns[i];
  }
  struct Line {
    uint32_t class_id;
    Sums d;
  };
  std::vector<Line> lines;
  uint64_t calls = 0;
  for (const auto& [id, s] : now) {
    const Sums& before = last_[id];
    Sums d;
    d.calls = s.calls - std::min(s.calls, before.calls);
    d.ns = s.ns - std::min(s.ns, before.ns);
    for (int i = 0; i < SPLIT_PARTS; ++i)
      d.part_ns[i] = s.part_ns[i] - std::min(s.part_ns[i], before.part_ns[i]);
    calls += d.calls;
    if (s.calls) lines.push_back({id, d});
  }
  last_ = std::move(now);
  std::stable_sort(lines.begin(), lines.end(),
                   [](const Line& a, const Line& b) { return a.d.ns > b.d.ns; });
  const double secs = since_ns ? static_cast<double>(since_ns) / 1e9 : 1.0;
  std::vector<std::string> out;
  out.push_back(fmt::format("writelab explain: {:.0f} s, {:.0f} calls/s (--quiet: no table)",
                            static_cast<double>(elapsed_ns) / 1e9,
                            static_cast<double>(calls) / secs));
  std::string head = fmt::format("{:<32} {:>9} {:>9} {:>9}", "call", "calls/s", "p50", "p99");
  for (const char* name : kPartColumns) head += fmt::format(" {:>9}", name);
  out.push_back(head);
  for (size_t i = 0; i < lines.size() && i < kMaxRows; ++i) {
    const Line& l = lines[i];
    const Histogram h = l.class_id < hists.size() ? FromKernel(hists[l.class_id]) : Histogram();
    std::string line = fmt::format("{:<32} {:>9.0f} {:>9} {:>9}", ClassName(l.class_id),
                                   static_cast<double>(l.d.calls) / secs, PercentileText(h, 50),
                                   PercentileText(h, 99));
    for (int p = 0; p < SPLIT_PARTS; ++p)
      line += fmt::format(" {:>9}", l.d.ns ? fmt::format("{:.0f}%", ShareOf(l.d.part_ns[p], l.d.ns))
                                           : std::string("-"));
    out.push_back(std::move(line));
  }
  if (lines.size() > kMaxRows)
    out.push_back(fmt::format("... and {} more types of call", lines.size() - kMaxRows));
  return out;
}

void LiveTable::Draw(std::FILE* out, const std::vector<std::string>& lines) {
  if (drawn_) std::fprintf(out, "\033[%zuA", drawn_);  // back to the table's first line
  for (const std::string& l : lines) std::fprintf(out, "\r\033[K%s\n", l.c_str());
  std::fputs("\033[J", out);  // what a longer table drawn before left below
  std::fflush(out);
  drawn_ = lines.size();
}

void LiveTable::Erase(std::FILE* out) {
  if (!drawn_) return;
  std::fprintf(out, "\033[%zuA\r\033[J", drawn_);
  std::fflush(out);
  drawn_ = 0;
}

}  // namespace writelab
