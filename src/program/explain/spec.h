// SPDX-License-Identifier: MIT
// `writelab explain -- CMD` and `--pid PID`: what to watch and how.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace writelab {

struct ProgramSpec {
  std::vector<std::string> command;  // CMD and its arguments...
  pid_t pid = 0;                     // ...or a process to attach to (one of the two)
  uint64_t duration_ns = 0;          // --pid: stop after this long (0: when it exits)
  std::string user;  // run CMD as this user ("": the invoking one, SUDO_USER under sudo)
  std::vector<std::string> devices;  // --device: block devices watched from the start
  int top = 10;                      // slow calls listed
  uint64_t slow_ns = 0;              // 0: the 99th percentile so far
  bool quiet = false;                // no live table on stderr
  std::string calls_csv;             // --calls: every kept call's split, one line each
};

}  // namespace writelab
