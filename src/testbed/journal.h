// SPDX-License-Identifier: MIT
// The undo journal: every system change writelab makes (a scratch file, a
// loop device, a mount, a sysfs knob such as an I/O scheduler) is recorded
// here, with how to undo it, BEFORE it is made. The record is fsynced, so
// after a crash `writelab cleanup` can finish the job (docs/style.md 10).
//
// File: RUNTIME/journal-PID-START (RUNTIME is /run/writelab, owned by root,
// 0700; START is the process's start time, field 22 of /proc/PID/stat, so a
// reused PID is not mistaken for the run), one JSON object a line:
//   {"id":3,"op":"mount","path":"/run/writelab/mnt-123-0","value":"",
//    "check":"/dev/loop3"}                                   a step to undo
//   {"done":3}                                               it was undone
// Steps are undone in reverse order. The RAII owners in testbed/ undo their
// own step in their destructors and mark it done; the file is removed when
// every step is done.
//
// The runtime directory also holds one lock file per device (lock-DEV): a
// run holds an exclusive flock on it while it has changed that device's
// settings, so two runs never interleave their changes and cleanup never
// undoes a dead run's change under a live one.
#pragma once

#include <expected>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "io/file.h"
#include "writelab/error.h"
#include "writelab/unique_fd.h"

namespace writelab {

struct UndoStep {
  // file: unlink path (with a check "inode:DEV:INO", an experiment's own
  // file: only while path is still that regular file); dir: rmdir path;
  // loop: detach path (a /dev/loopN)
  // if its backing file is value; mount: unmount path; sysfs: write value
  // back to path (only /sys/block/*/queue/*, /sys/block/loop*/bdi/
  // {max_ratio_fine,strict_limit} and /sys/fs/ext4/*/*); cgroup: kill
  // what is left in the cgroup path (writelab-PID-N) and remove it;
  // cgroup-subtree: write value ("-io") to path (a cgroup.subtree_control)
  // (testbed/cgroup.h).
  std::string op;
  std::string path;
  std::string value;
  // What the object must still be for the undo to touch it: file: its
  // device and inode, "inode:DEV:INO" (experiment files); loop: the
  // backing file's inode; mount: the mounted source; sysfs on a loop device:
  // "loop:INODE" of its backing file. Empty: nothing to check.
  std::string check;
};

// One line of a journal, checked: a step, or the id of a step undone.
struct JournalLine {
  int done = 0;  // > 0: this line marks step `done` undone
  int id = 0;    // > 0: this line records `step`
  UndoStep step;
};
// Parses and validates one line; the error says what is wrong with it.
std::expected<JournalLine, std::string> ParseJournalLine(std::string_view line);

// Performs one undo step. A step whose change is already gone (file
// missing, loop detached, not mounted) or whose object is no longer the one
// recorded (check) succeeds without touching it: undo is idempotent. In the
// second case *left_alone, if given, says why. A loop device's knob is
// restored onto the recorded image, and onto a loop device that nothing is
// bound to any more (test beds attach with LO_FLAGS_AUTOCLEAR, so a killed
// run's device unbinds itself; its settings are still the run's change), but
// never onto a device bound to another file since; *note, if given, says
// when the device was unbound.
Status Undo(const UndoStep& step, std::string* left_alone = nullptr, std::string* note = nullptr);

// The device whose settings a sysfs path changes ("vda" for
// /sys/block/vda/queue/scheduler), or "" when the path is none of those
// writelab may change. Also /sys/block/loopN/bdi/{max_ratio_fine,strict_limit}:
// a loop device's writeback limits.
std::string SysfsDevice(std::string_view path);

class UndoJournal {
 public:
  // dir: /run/writelab normally; tests may pass another. Created 0700 when
  // missing; refused when another user could change it (io/trusted_dir.h).
  static Result<std::unique_ptr<UndoJournal>> Open(const std::string& dir = "/run/writelab");
  ~UndoJournal();

  // Records step durably; returns its id for Done().
  Result<int> Record(const UndoStep& step);
  void Done(int id);
  const std::string& path() const { return path_; }
  // The runtime directory the journal is in (checked, private), by path and
  // by descriptor: where test beds make their mount points.
  std::string dir() const { return ParentDir(path_); }
  int dir_fd() const { return dir_.get(); }

  // Takes the exclusive lock on device's settings (counted: nested holders
  // of this journal share it). Fails at once, saying so, when another run
  // holds it.
  Status LockDevice(const std::string& device);
  void UnlockDevice(const std::string& device);

 private:
  UndoJournal(std::string path, UniqueFd dir, UniqueFd fd)
      : path_(std::move(path)), dir_(std::move(dir)), fd_(std::move(fd)) {}
  Status Append(const std::string& line);
  std::string path_;
  UniqueFd dir_;
  UniqueFd fd_;
  int next_id_ = 1;
  int pending_ = 0;
  struct Held {
    UniqueFd fd;
    int count = 0;
  };
  std::map<std::string, Held> locks_;
};

// While it lives, every file CreateOwnFile makes is journaled before it is
// written (a file step, its inode as check) and marked done when it is
// removed or kept (io/own_files.h), so that after a kill -9 `writelab
// cleanup` removes what the run left: those files, and no other file that
// has since taken a name. Null journal: nothing is journaled (not root).
class OwnFilesJournaled {
 public:
  explicit OwnFilesJournaled(UndoJournal* journal);
  ~OwnFilesJournaled();
  OwnFilesJournaled(const OwnFilesJournaled&) = delete;
  OwnFilesJournaled& operator=(const OwnFilesJournaled&) = delete;

 private:
  bool set_ = false;
};

// The start time of a process (clock ticks since boot, /proc/PID/stat field
// 22), or 0 when there is no such process.
unsigned long long ProcessStartTime(int pid);

struct CleanupReport {
  std::vector<std::string> undone;   // "unmounted /run/writelab/mnt-1-0"
  std::vector<std::string> skipped;  // journals of live processes, malformed lines
  std::vector<std::string> errors;
};

// `writelab cleanup` (cleanup.cc): undoes what journals of dead writelab
// processes left. Only regular files owned by this user in a trusted
// private directory are read. Fails when dir is missing or untrusted. A
// step skipped because a live run holds its device keeps its journal.
Result<CleanupReport> CleanupStale(const std::string& dir = "/run/writelab");

// What LockDevice does once it holds a device's lock (cleanup.cc): every
// step a dead run left pending on that device (lock: the device's name,
// or the cgroups' lock) is undone first and marked done in its journal, so
// that the live run never takes a dead run's change for the device's own
// setting (and leaves it behind for good when it restores it).
Status UndoDeadRunsOn(int dir_fd, const std::string& dir, const std::string& lock);

// A decimal number without sign or space, all of s.
std::optional<unsigned long long> ParseUnsigned(std::string_view s);

}  // namespace writelab
