// SPDX-License-Identifier: MIT
// The victim's calls of an `explain --calls` CSV, as the tests of who made
// them wait read them (explain_blame_test.cc, explain_holders_test.cc).
#pragma once

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace writelab::testing {

// A victim's call from the --calls CSV: its time, blocked and uncharged
// ns, and its culprits ("PID:NS" or "CAUSE:NS"), most time first.
struct VictimCall {
  long pid = 0;
  uint64_t start = 0;  // ns, CLOCK_MONOTONIC
  std::string call;
  double ns = 0, blocked = 0, uncharged = 0, throttled = 0, other = 0, lock = 0, journal = 0;
  std::vector<std::pair<std::string, double>> culprits;
};

inline std::vector<std::string> Split(const std::string& s, char by) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string f; std::getline(in, f, by);) out.push_back(f);
  return out;
}

inline std::vector<VictimCall> ReadCalls(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> head = Split(line, ',');
  std::map<std::string, size_t> col;
  for (size_t i = 0; i < head.size(); ++i) col[head[i]] = i;
  std::vector<VictimCall> out;
  while (std::getline(in, line)) {
    const std::vector<std::string> f = Split(line, ',');
    if (f.size() < head.size() - 1) continue;  // the culprits field may be empty
    VictimCall c;
    c.pid = std::stol(f[col["pid"]]);
    c.call = f[col["call"]];
    c.start = std::stoull(f[col["start_ns"]]);
    c.ns = std::stod(f[col["ns"]]);
    c.blocked = std::stod(f[col["blocked_ns"]]);
    c.uncharged = std::stod(f[col["uncharged_ns"]]);
    c.throttled = std::stod(f[col["throttled_ns"]]);
    c.other = std::stod(f[col["other_ns"]]);
    c.lock = std::stod(f[col["lock_ns"]]);
    c.journal = std::stod(f[col["journal_ns"]]);
    if (col["culprits"] < f.size())
      for (const std::string& who : Split(f[col["culprits"]], ';')) {
        const auto colon = who.find(':');
        c.culprits.push_back({who.substr(0, colon), std::stod(who.substr(colon + 1))});
      }
    out.push_back(std::move(c));
  }
  return out;
}

// " WHO N.N ms" for each of a call's culprits, most time first.
inline std::string CulpritsText(const VictimCall& c) {
  std::string out;
  for (const auto& [who, ns] : c.culprits) {
    char one[64];
    std::snprintf(one, sizeof one, " %s %.1f ms", who.c_str(), ns / 1e6);
    out += one;
  }
  return out;
}

}  // namespace writelab::testing
