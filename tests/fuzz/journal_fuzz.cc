// SPDX-License-Identifier: MIT
// The undo journal's line parser (what `writelab cleanup` obeys as root) on
// any text, line by line as cleanup reads a journal: never crashes, and every
// step it accepts is one cleanup may perform: a known op, an absolute path
// without "..", a sysfs path only under the knobs writelab sets, and a
// cgroup step only on a writelab-PID-N cgroup or a subtree_control's -io.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "testbed/cgroup.h"
#include "testbed/journal.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    auto parsed = writelab::ParseJournalLine(line);
    if (!parsed) continue;
    if ((parsed->done > 0) == (parsed->id > 0)) __builtin_trap();  // one or the other
    if (parsed->done > 0) continue;
    const writelab::UndoStep& s = parsed->step;
    if (s.op == "pgroup") continue;
    if (s.path.empty() || s.path[0] != '/' || s.path.find("/../") != std::string::npos)
      __builtin_trap();
    if (s.op == "sysfs" && writelab::SysfsDevice(s.path).empty()) __builtin_trap();
    if (s.op.starts_with("cgroup")) {  // fsync's cgroup=: only writelab's cgroups and controllers
      if (!writelab::CgroupStepProblem(s).empty()) __builtin_trap();
      continue;
    }
    if (s.op != "file" && s.op != "dir" && s.op != "loop" && s.op != "mount" && s.op != "sysfs")
      __builtin_trap();
  }
  return 0;
}
