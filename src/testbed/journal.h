// The undo journal: every system change writelab makes (a scratch file, a
// loop device, a mount, a sysfs knob such as an I/O scheduler) is recorded
// here, with how to undo it, BEFORE it is made. The record is fsynced, so
// after a crash `writelab cleanup` can finish the job (STYLE.md 10).
//
// File: /run/writelab/journal-PID, one JSON object a line:
//   {"id":3,"op":"mount","path":"/run/writelab/mnt-123-0"}   a step to undo
//   {"done":3}                                               it was undone
// Steps are undone in reverse order. The RAII owners in testbed/ undo their
// own step in their destructors and mark it done; the file is removed when
// every step is done.
#pragma once

#include <expected>
#include <memory>
#include <string>
#include <vector>

#include "writelab/error.h"
#include "writelab/unique_fd.h"

namespace writelab {

struct UndoStep {
  // file: unlink path; dir: rmdir path; loop: detach path (a /dev/loopN)
  // if its backing file is value; mount: unmount path; sysfs: write value
  // back to path.
  std::string op;
  std::string path;
  std::string value;
};

// Performs one undo step. A step whose change is already gone (file
// missing, loop detached, not mounted) succeeds: undo is idempotent.
Status Undo(const UndoStep& step);

class UndoJournal {
 public:
  // dir: /run/writelab normally; tests may pass another.
  static std::expected<std::unique_ptr<UndoJournal>, Error> Open(
      const std::string& dir = "/run/writelab");
  ~UndoJournal();

  // Records step durably; returns its id for Done().
  std::expected<int, Error> Record(const UndoStep& step);
  void Done(int id);
  const std::string& path() const { return path_; }

 private:
  UndoJournal(std::string path, UniqueFd fd) : path_(std::move(path)), fd_(std::move(fd)) {}
  Status Append(const std::string& line);
  std::string path_;
  UniqueFd fd_;
  int next_id_ = 1;
  int pending_ = 0;
};

// Steps of a journal file not marked done, in the order they were recorded.
std::expected<std::vector<UndoStep>, Error> PendingSteps(const std::string& journal_path);

struct CleanupReport {
  std::vector<std::string> undone;   // "unmounted /run/writelab/mnt-1-0"
  std::vector<std::string> skipped;  // journals of live processes
  std::vector<std::string> errors;
};

// `writelab cleanup`: undoes what journals of dead writelab processes left.
CleanupReport CleanupStale(const std::string& dir = "/run/writelab");

}  // namespace writelab
