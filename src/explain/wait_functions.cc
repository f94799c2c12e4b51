// SPDX-License-Identifier: MIT
#include "explain/wait_functions.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace writelab {
namespace {

struct Symbol {
  uint64_t addr;
  std::string_view name;
};

// The text symbols of a kallsyms text, sorted by address.
std::vector<Symbol> TextSymbols(std::string_view text) {
  std::vector<Symbol> out;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(at, end - at);
    at = end + 1;
    const size_t a = line.find(' ');
    if (a == std::string_view::npos || a + 3 > line.size()) continue;
    const char type = line[a + 1];
    if (type != 't' && type != 'T') continue;
    std::string_view name = line.substr(a + 3);
    if (size_t cut = name.find_first_of(" \t"); cut != std::string_view::npos)
      name = name.substr(0, cut);
    const std::string hex(line.substr(0, a));
    char* rest = nullptr;
    const uint64_t addr = std::strtoull(hex.c_str(), &rest, 16);
    if (!rest || *rest) continue;
    out.push_back({addr, name});
  }
  std::sort(out.begin(), out.end(),
            [](const Symbol& x, const Symbol& y) { return x.addr < y.addr; });
  return out;
}

}  // namespace

std::vector<WaitRange> WaitRangesFrom(std::string_view kallsyms) {
  const std::vector<Symbol> syms = TextSymbols(kallsyms);
  std::vector<WaitRange> out;
  for (size_t i = 0; i < syms.size(); ++i) {
    const Symbol& s = syms[i];
    if (s.addr == 0) continue;
    // "balance_dirty_pages.isra.0": the compiler's copy is the function
    const std::string_view base = s.name.substr(0, s.name.find('.'));
    const auto fn = std::find_if(std::begin(kWaitFunctions), std::end(kWaitFunctions),
                                 [&](const WaitFunction& f) { return f.name == base; });
    if (fn == std::end(kWaitFunctions)) continue;
    size_t next = i + 1;
    while (next < syms.size() && syms[next].addr == s.addr) ++next;
    if (next == syms.size()) continue;  // no end known
    if (out.size() >= SPLIT_WAIT_FNS) break;
    out.push_back({s.addr, syms[next].addr, fn->part, std::string(s.name)});
  }
  return out;  // in address order: TextSymbols sorted them
}

std::vector<WaitRange> WaitRanges() {
  std::ifstream in("/proc/kallsyms");
  if (!in) return {};
  std::ostringstream text;
  text << in.rdbuf();
  return WaitRangesFrom(text.str());
}

const char* SplitPartName(int part) {
  switch (part) {
    case SPLIT_CPU:
      return "on CPU";
    case SPLIT_RUNQ:
      return "waiting for a CPU";
    case SPLIT_JOURNAL:
      return "journal commit";
    case SPLIT_WRITEBACK:
      return "its writes";
    case SPLIT_FLUSH:
      return "cache flush";
    case SPLIT_THROTTLE:
      return "dirty throttling";
    case SPLIT_OTHER:
      return "other sleep";
  }
  return "?";
}

const char* SplitOverlapName(int overlap) {
  switch (overlap) {
    case SPLIT_DURING_COMMIT:
      return "while a commit ran";
    case SPLIT_DURING_FLUSH:
      return "while a flush was in flight";
    case SPLIT_DURING_WRITES:
      return "while writes were in flight";
  }
  return "?";
}

}  // namespace writelab
