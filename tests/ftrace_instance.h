// SPDX-License-Identifier: MIT
// A private ftrace instance: an observer of the kernel's own events for the
// tests that check writelab's BPF programs against them, sharing no code
// with writelab.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "bed_journal.h"
#include "harness.h"

namespace writelab::testing {

// A private ftrace instance recording events (each with its filter, ""
// for none), removed at the end; journaled (bed_journal.h), so that a test
// killed before its end (ctest's timeout) leaves no instance recording
// once `writelab cleanup` has run. clock: its trace_clock where not the
// default ("mono": CLOCK_MONOTONIC, as writelab's times).
class FtraceInstance {
 public:
  FtraceInstance(const std::string& name,
                 const std::vector<std::pair<std::string, std::string>>& events,
                 const std::string& clock = "") {
    if (!std::filesystem::exists("/sys/kernel/tracing/instances"))
      Shell("mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null");
    dir_ = "/sys/kernel/tracing/instances/writelab-" + name + "-test-" + std::to_string(getpid());
    if (mkdir(dir_.c_str(), 0700) != 0) {
      dir_.clear();
      return;
    }
    step_ = BedJournal::Record({"dir", dir_, "", ""});
    Shell("echo 16384 > " + dir_ + "/buffer_size_kb");
    if (!clock.empty()) {
      Shell("echo " + clock + " > " + dir_ + "/trace_clock");
      // Times compared with CLOCK_MONOTONIC must be on it: not ok() otherwise.
      if (Slurp(dir_ + "/trace_clock").find("[" + clock + "]") == std::string::npos) {
        if (rmdir(dir_.c_str()) == 0) BedJournal::Done(step_);
        dir_.clear();
        return;
      }
    }
    for (const auto& [event, filter] : events) {
      const std::string e = dir_ + "/events/" + event;
      if (!filter.empty()) Shell("echo '" + filter + "' > " + e + "/filter");
      Shell("echo 1 > " + e + "/enable");
    }
    Shell("echo 1 > " + dir_ + "/tracing_on");
  }
  ~FtraceInstance() {
    if (!dir_.empty() && rmdir(dir_.c_str()) == 0) BedJournal::Done(step_);
  }
  bool ok() const { return !dir_.empty(); }
  // Stops recording; the trace's text.
  std::string Stop() {
    Shell("echo 0 > " + dir_ + "/tracing_on");
    return Slurp(dir_ + "/trace");
  }

 private:
  std::string dir_;
  BedStep step_ = 0;
};

// Whether a trace's text (FtraceInstance::Stop) says its buffer overwrote
// events: the header's entries kept against entries written. An observer
// that lost events cannot judge what it did not see.
inline bool OverwroteEvents(const std::string& trace) {
  const size_t at = trace.find("# entries-in-buffer/entries-written: ");
  unsigned long kept = 0, written = 0;
  return at == std::string::npos ||
         std::sscanf(trace.c_str() + at, "# entries-in-buffer/entries-written: %lu/%lu", &kept,
                     &written) != 2 ||
         kept != written;
}

// The task (COMM-PID) of an ftrace line, before its CPU ("[001]").
inline bool TaskOf(const std::string& line, long& pid, std::string& comm) {
  const size_t cpu = line.find(" [");
  if (cpu == std::string::npos) return false;
  const std::string task = line.substr(0, cpu);
  const size_t dash = task.rfind('-'), from = task.find_first_not_of(' ');
  if (dash == std::string::npos || from == std::string::npos || from >= dash) return false;
  pid = std::atol(task.c_str() + dash + 1);
  comm = task.substr(from, dash - from);
  return true;
}

}  // namespace writelab::testing
