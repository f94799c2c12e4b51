// SPDX-License-Identifier: MIT
// ScopedChange: one system change, journaled before it is made and undone
// when the owner goes away (RAII + the undo journal, docs/style.md 10).
#pragma once

#include <expected>
#include <functional>
#include <string>

#include "testbed/journal.h"

namespace writelab {

class ScopedChange {
 public:
  // Records undo in the journal, then runs act(). If act() fails, the change
  // is undone at once and the error returned; unless it failed with EEXIST:
  // then what exists is not writelab's, and the step is marked done untouched.
  static Result<ScopedChange> Make(UndoJournal& journal, UndoStep undo,
                                   const std::function<Status()>& act);
  ScopedChange(ScopedChange&& other) noexcept;
  ScopedChange& operator=(ScopedChange&&) = delete;
  ScopedChange(const ScopedChange&) = delete;
  ~ScopedChange();

  // Undoes now; later calls do nothing. Returns the undo's result.
  Status Revert();

  const UndoStep& step() const { return step_; }

 private:
  friend Result<ScopedChange> SetSysfs(UndoJournal&, const std::string&, const std::string&);
  ScopedChange(UndoJournal* journal, UndoStep step, int id)
      : journal_(journal), step_(std::move(step)), id_(id) {}
  UndoJournal* journal_;
  UndoStep step_;
  int id_;
  std::string locked_device_;  // released once the change is undone
};

// Writes value to a sysfs file, journaling the old value first. For
// .../queue/scheduler the old value is the bracketed name. Only the knobs
// SysfsDevice() accepts; holds that device's lock (UndoJournal::LockDevice)
// until the change is undone, and fails at once when another run holds it.
Result<ScopedChange> SetSysfs(UndoJournal& journal, const std::string& path,
                              const std::string& value);

}  // namespace writelab
