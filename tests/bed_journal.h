// SPDX-License-Identifier: MIT
// What a test changes on the machine (a loop device, a mount, a device's
// dirty limit, a file and a directory of its own), journaled the way
// writelab journals its own test beds (testbed/journal.h): the test's
// destructors undo each change and mark it done, and when a signal ends the
// test's process before they run (Ctrl-C, a closed pipe, ctest's timeout,
// kill -9), `writelab cleanup` undoes what the journal still holds. The test
// command runs it before the tests (scripts/test.sh).
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <mutex>
#include <string>

#include "testbed/journal.h"

namespace writelab::testing {

class BedJournal {
 public:
  // Records step in this process's journal (/run/writelab/journal-PID-START,
  // opened at the first step); its id for Done, or 0 when it could not be
  // recorded (not root: then the test makes no bed either).
  static int Record(const UndoStep& step) {
    std::lock_guard lock(Mu());
    UndoJournal* j = Journal();
    if (!j) return 0;
    auto id = j->Record(step);
    return id ? *id : 0;
  }
  // The change step id recorded was undone.
  static void Done(int id) {
    if (id == 0) return;
    std::lock_guard lock(Mu());
    if (UndoJournal* j = Journal()) j->Done(id);
  }
  // A file step's check: the file still is the one made (its device and
  // inode), never another one given its name since.
  static std::string InodeOf(const std::string& path) {
    struct stat st {};
    if (lstat(path.c_str(), &st) != 0) return "";
    return "inode:" + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  }
  // A loop step's check and a loop device's knobs' ("loop:" before it): the
  // backing file's inode.
  static std::string BackingInode(const std::string& path) {
    struct stat st {};
    return lstat(path.c_str(), &st) == 0 ? std::to_string(st.st_ino) : "";
  }

 private:
  static std::mutex& Mu() {
    static std::mutex mu;
    return mu;
  }
  // This process's journal. A child forked from a process that had one
  // opens its own (its steps are its own), leaving the parent's open.
  static UndoJournal* Journal() {
    static std::unique_ptr<UndoJournal> journal;
    static pid_t owner = 0;
    if (owner != getpid()) {
      if (journal) (void)journal.release();  // the parent's: not closed, not removed here
      auto opened = UndoJournal::Open("/run/writelab");
      journal = opened ? std::move(*opened) : nullptr;
      owner = getpid();
    }
    return journal.get();
  }
};

}  // namespace writelab::testing
