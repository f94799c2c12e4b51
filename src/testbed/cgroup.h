// SPDX-License-Identifier: MIT
// A cgroup v2 of writelab's own, for `fsync --mitigation cgroup=...`: the
// background load runs in it under an io controller setting (io.max,
// io.latency) for the device under test (docs/fsync.md, "Mitigations").
//
// The cgroup is made below the cgroup writelab runs in, as
// writelab-PID-N; mkdir fails if that name exists, so writelab never
// adopts a cgroup it did not make. What it takes is journaled before it is
// done (testbed/journal.h), so that a killed run's `writelab cleanup` undoes
// it:
//   cgroup-subtree  a controller enabled in the parent's
//                   cgroup.subtree_control: "-io" written back
//   cgroup          the cgroup made: what the kernel still lists in it is
//                   killed (cgroup.kill, or each member the kernel places
//                   there), then it is removed
// The hierarchy's mount point is a parameter (CgroupPlace), so that the
// mechanism is tested on a fake tree in a temporary directory where the
// machine's own cgroup v2 has no io controller.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "testbed/scoped_change.h"
#include "writelab/error.h"

namespace writelab {

// Where the cgroup v2 hierarchy is mounted and the cgroup below it that
// writelab runs in.
struct CgroupPlace {
  std::string root;       // the cgroup2 mount point: "/sys/fs/cgroup"
  std::string own = "/";  // writelab's cgroup, from the root: "/", "/user.slice/x.scope"
  // A cgroup v1 hierarchy (FindV1CgroupPlace): it has no subtree_control,
  // its controllers are those it was mounted with.
  bool v1 = false;
  std::string dir() const { return own == "/" ? root : root + own; }
};

// The hierarchy and this process's cgroup in it (/proc/self/mountinfo,
// /proc/self/cgroup); an error says why there is none (ENOENT: no cgroup2
// mount).
Result<CgroupPlace> FindCgroupPlace();

// Where the cgroup v1 hierarchy of controller ("memory") is mounted and
// writelab's cgroup in it (/proc/self/cgroup's "N:memory:/path"); ENOENT
// when no v1 hierarchy has it.
Result<CgroupPlace> FindV1CgroupPlace(std::string_view controller);

// Whether a space-separated controller list ("cpu io memory") names name.
bool ListsController(std::string_view list, std::string_view name);

// The lock (UndoJournal::LockDevice) a run holds while it has a cgroup v2
// of its own: two runs never enable and disable a controller under each
// other (a v1 hierarchy has no subtree_control: no lock).
inline constexpr char kCgroupLock[] = "cgroup";

class OwnCgroup {
 public:
  // Enables each of controllers in place's cgroup.subtree_control where it
  // is not yet (each journaled first, so "-NAME" goes back; none on a v1
  // hierarchy, which has its controllers where it is mounted), then makes
  // place.dir()/writelab-PID-N (journaled first). An enabled controller
  // must be offered by place's cgroup.controllers. Errors keep their errno:
  // EBUSY when the parent holds processes of its own (cgroup v2 enables
  // controllers only below a cgroup without them, its root excepted).
  static Result<std::unique_ptr<OwnCgroup>> Make(const CgroupPlace& place,
                                                 const std::vector<std::string>& controllers,
                                                 UndoJournal& journal);
  ~OwnCgroup();  // Revert()
  OwnCgroup(const OwnCgroup&) = delete;
  OwnCgroup& operator=(const OwnCgroup&) = delete;

  // Writes value to the cgroup's interface file (io.max: "253:0
  // wbps=1048576") and returns what the file reads back.
  Result<std::string> Set(const std::string& file, const std::string& value);
  // Moves pid (and, as they fork, its children) into the cgroup.
  Status Place(pid_t pid);
  // Undoes Make, newest first: kills what is left in the cgroup, removes
  // it, disables what Make enabled. Later calls do nothing.
  Status Revert();

  const std::string& path() const { return path_; }
  // The controllers Make enabled (those already enabled are not listed).
  const std::vector<std::string>& enabled() const { return enabled_; }

 private:
  explicit OwnCgroup(UndoJournal& journal) : journal_(&journal) {}
  UndoJournal* journal_;
  std::string path_;
  std::vector<std::string> enabled_;
  std::vector<ScopedChange> subtree_;  // in the order made
  std::optional<ScopedChange> dir_;
  bool locked_ = false;
};

// The undo steps (testbed/journal.cc calls them; idempotent). A member is
// killed only while the kernel places it in that cgroup (pid 1 and the
// caller never).
Status UndoCgroup(const UndoStep& step);
Status UndoCgroupSubtree(const UndoStep& step);
// Why a journal line's cgroup step is refused, or "" when it is sound: a
// cgroup step's path must end in writelab-PID-N, a cgroup-subtree step's in
// /cgroup.subtree_control with the value "-io" or "-memory".
std::string CgroupStepProblem(const UndoStep& step);

}  // namespace writelab
