// SPDX-License-Identifier: MIT
#include "program/top/screen.h"

#include <fmt/format.h>

#include <algorithm>

namespace writelab {
namespace {

std::string Mb(double bytes) { return fmt::format("{:.1f}", bytes / 1e6); }

// The durability calls' split, their three largest parts: "flush 81% journal 9% cpu 6%".
std::string SplitText(const TopProcess& p) {
  static constexpr const char* kParts[SPLIT_PARTS] = {"cpu",   "cpu-wait",  "journal", "writes",
                                                      "flush", "throttled", "other"};
  if (!p.sync_ns) return "";
  std::vector<std::pair<uint64_t, int>> parts;
  for (int i = 0; i < SPLIT_PARTS; ++i) parts.push_back({p.sync_part_ns[i], i});
  std::sort(parts.rbegin(), parts.rend());
  std::string out;
  for (int i = 0; i < 3; ++i) {
    const double pct = 100.0 * static_cast<double>(parts[i].first) / static_cast<double>(p.sync_ns);
    if (pct >= 1)
      out += fmt::format("{}{} {:.0f}%", out.empty() ? "" : " ", kParts[parts[i].second], pct);
  }
  return out;
}

std::string P99Text(const TopProcess& p) {
  if (!p.syncs) return "-";
  if (p.sync_p99_ms) return fmt::format("{:.1f}", *p.sync_p99_ms);
  return fmt::format("{:.1f}*", static_cast<double>(p.sync_max_ns) / 1e6);
}

}  // namespace

double TopActivity(const TopProcess& p) {
  return static_cast<double>(p.dirtied + p.written) / 1e6 + static_cast<double>(p.sync_ns) / 1e6 +
         p.throttled_ms + p.waited_ms + p.caused_ms;
}

std::string TopCulpritName(const TopStallKey& k, const TopStall& s) {
  if (k.culprit.cause == kCauseUncharged) return "not charged (no write explains the sleep)";
  if (k.culprit.cause == TRACE_CAUSE_PROCESS && k.culprit.tgid == k.victim) return "self";
  return CulpritName(k.culprit, s.culprit_comm, 0);
}

std::string TopStallName(const TopStallKey& k, const TopStall& s) {
  return fmt::format("{} (pid {}) <- {}", s.victim_comm, k.victim, TopCulpritName(k, s));
}

std::vector<std::string> TopScreen(const TopInterval& now,
                                   const std::map<uint32_t, TopProcess>& run,
                                   const std::map<TopStallKey, TopStall>& run_stalls,
                                   const TopScreenContext& ctx) {
  const double secs = now.seconds() > 0 ? now.seconds() : 1.0;
  std::vector<std::string> out;
  out.push_back(fmt::format(
      "writelab top: {:.0f} s; this interval {:.1f} s; machine: dirty {} MB, writeback {} MB "
      "(Ctrl-C ends; * = max, fewer than 100 calls for a p99)",
      ctx.elapsed_s, secs, Mb(static_cast<double>(ctx.dirty)),
      Mb(static_cast<double>(ctx.writeback))));
  out.push_back(fmt::format("{:>8} {:<16} {:>12} {:>12} {:>12} {:>12} {:>8} {:>10}  {}", "PID",
                            "COMMAND", "dirtied MB/s", "written MB/s", "dirty now MB",
                            "throttled ms", "syncs/s", "sync p99 ms", "syncs' split"));
  std::vector<std::pair<double, uint32_t>> order;
  for (const auto& [tgid, p] : now.processes)
    if (double a = TopActivity(p); a > 0) order.push_back({a, tgid});
  std::sort(order.rbegin(), order.rend());
  for (size_t i = 0; i < order.size() && i < ctx.rows; ++i) {
    const uint32_t tgid = order[i].second;
    const TopProcess& p = now.processes.at(tgid);
    auto total = run.find(tgid);
    const double held = total == run.end()
                            ? 0.0
                            : std::max(0.0, static_cast<double>(total->second.dirtied) -
                                                static_cast<double>(total->second.written_cached));
    out.push_back(fmt::format("{:>8} {:<16} {:>12} {:>12} {:>12} {:>12.1f} {:>8.1f} {:>10}  {}",
                              tgid, p.comm.substr(0, 16), Mb(static_cast<double>(p.dirtied) / secs),
                              Mb(static_cast<double>(p.written) / secs), Mb(held), p.throttled_ms,
                              static_cast<double>(p.syncs) / secs, P99Text(p), SplitText(p)));
  }
  if (order.size() > ctx.rows)
    out.push_back(fmt::format("... and {} more processes", order.size() - ctx.rows));
  std::vector<std::pair<double, TopStallKey>> pairs;
  for (const auto& [k, s] : now.stalls) pairs.push_back({s.ms, k});
  std::sort(pairs.begin(), pairs.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  out.push_back("");
  out.push_back(fmt::format("who stalls whom (victim <- culprit: ms of its waits charged){}",
                            pairs.empty() ? ": nobody waited on anyone's writes" : ""));
  for (size_t i = 0; i < pairs.size() && i < ctx.rows; ++i) {
    const TopStallKey& k = pairs[i].second;
    const TopStall& s = now.stalls.at(k);
    auto total = run_stalls.find(k);
    out.push_back(fmt::format("  {:<64} {:>9.1f} ms  ({:.1f} ms since the start)",
                              TopStallName(k, s), s.ms,
                              total == run_stalls.end() ? s.ms : total->second.ms));
  }
  return out;
}

}  // namespace writelab
