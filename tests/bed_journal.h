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

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>

#include "testbed/journal.h"

namespace writelab::testing {

// A step of a test's journal (BedJournal::Record); 0: none.
using BedStep = int64_t;

class BedJournal {
 public:
  // Records step in this process's journal (/run/writelab/journal-PID-START,
  // opened at the first step); its step for Done, or 0 when it could not be
  // recorded (not root: then the test makes no bed either). A step names
  // the process whose journal holds it (its pid above the journal's id), so
  // that a forked child, whose journal numbers its own steps from 1 again,
  // never takes its parent's for one of its own.
  // Its paths are made absolute and canonical, as the kernel shows a loop
  // device's backing file and as cleanup's checks compare them
  // (WRITELAB_TEST_DIR may be relative or reached through a link).
  static BedStep Record(UndoStep step) {
    std::lock_guard lock(Mu());
    UndoJournal* j = Journal();
    if (!j) return 0;
    if (step.op != "sysfs") step.path = Canonical(step.path);
    if (step.op == "loop") step.value = Canonical(step.value);
    auto id = j->Record(step);
    return id ? (BedStep{getpid()} << 32) | static_cast<uint32_t>(*id) : 0;
  }
  // This process's journal itself, for a change that journals its own
  // steps (testbed/cgroup.h's OwnCgroup); nullptr where Record would give 0.
  static UndoJournal* Shared() {
    std::lock_guard lock(Mu());
    return Journal();
  }
  // The change recorded as step was undone. In a process whose journal does
  // not hold it (a forked child), nothing.
  static void Done(BedStep step) {
    std::lock_guard lock(Mu());
    if (step != 0 && step >> 32 == getpid() && Held().owner == getpid() && Held().journal)
      Held().journal->Done(static_cast<int>(step & 0xffffffff));
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
  static std::string Canonical(const std::string& path) {
    std::error_code ec;
    const std::filesystem::path p = std::filesystem::weakly_canonical(path, ec);
    return ec ? path : p.string();
  }
  // The journal and the process that opened it. Closed (and removed when
  // every step is done) at that process's exit only: a forked child that
  // exits normally leaves its parent's alone.
  struct Holder {
    UndoJournal* journal = nullptr;
    pid_t owner = 0;
    ~Holder() {
      if (owner == getpid()) delete journal;
    }
  };
  static Holder& Held() {
    static Holder held;
    return held;
  }
  // This process's journal. A child forked from a process that had one
  // opens its own (its steps are its own), leaving the parent's open.
  static UndoJournal* Journal() {
    Holder& h = Held();
    if (h.owner != getpid()) {
      auto opened = UndoJournal::Open("/run/writelab");
      h.journal = opened ? opened->release() : nullptr;  // the parent's, if any, left as it is
      h.owner = getpid();
    }
    return h.journal;
  }
};

}  // namespace writelab::testing
