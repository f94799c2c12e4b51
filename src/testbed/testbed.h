// SPDX-License-Identifier: MIT
// Test beds: a file system made for the experiment on a loop device over a
// sparse file (or a tmpfs), mounted under /run/writelab, undone on exit.
//
// Grammar of --testbed: SPEC[,SPEC...], SPEC = FS[:OPTION[:OPTION...]]
//   FS      ext4 | xfs | btrfs | tmpfs | raw (a bare loop device, for `stride`)
//   OPTION  a mount option passed to mount(2) ("data=journal", "noatime",
//           "discard"), for ext4 "nojournal" (mkfs -O ^has_journal), or
//           "dirty=SIZE": the loop device's own dirty-page limit (not tmpfs)
// e.g. "ext4:data=journal,ext4:nojournal,xfs,tmpfs:huge=always,ext4:dirty=32M".
#pragma once

#include <atomic>
#include <cstdint>
#include <expected>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "testbed/journal.h"
#include "testbed/scoped_change.h"
#include "writelab/unique_fd.h"

namespace writelab {

struct TestbedSpec {
  std::string label;  // as the user wrote it: "ext4:data=journal"
  std::string fs;     // "ext4"
  std::vector<std::string> mount_options;
  bool nojournal = false;
  // dirty=SIZE: the loop device's own dirty-page limit (its bdi's max_bytes,
  // with strict_limit), so its writers are throttled in balance_dirty_pages
  // as on the 2009 machines' small memory; the global sysctls are untouched.
  uint64_t dirty_max = 0;
};

std::expected<std::vector<TestbedSpec>, std::string> ParseTestbeds(std::string_view list);

struct TestbedOptions {
  uint64_t size = 4ull << 30;
  // Refused unless it and its parents are trusted (io/trusted_dir.h, kPrivate);
  // created 0700 when missing. The image is made in it with O_EXCL|O_NOFOLLOW
  // and handed to the loop device by descriptor.
  std::string scratch_dir = "/var/tmp/writelab";
  const std::atomic<bool>* interrupted = nullptr;  // stops a raw bed's zero fill
};

class Testbed {
 public:
  // Needs root. Every change is journaled in journal before it is made.
  static Result<std::unique_ptr<Testbed>> Provision(const TestbedSpec& spec,
                                                    const TestbedOptions& options,
                                                    UndoJournal& journal);
  ~Testbed();  // unmounts, detaches, removes the backing file, in reverse order

  // Where the experiment runs: the mount point, or /dev/loopN for raw.
  const std::string& mount_point() const { return mount_point_; }
  const std::string& device() const { return device_; }  // "loop3"; "" for tmpfs
  bool loop_direct_io() const { return loop_direct_io_; }
  const TestbedSpec& spec() const { return spec_; }

 private:
  Testbed() = default;
  Status AttachLoop(const std::string& backing, int backing_fd, UndoJournal& journal);
  Status Mount(const std::string& source, const std::string& data, UndoJournal& journal);
  Status LimitDirty(uint64_t bytes, UndoJournal& journal);

  TestbedSpec spec_;
  std::string mount_point_;
  std::string device_;
  bool loop_direct_io_ = false;
  UniqueFd loop_fd_;  // held open while the test bed lives
  std::vector<ScopedChange> changes_;
};

// Runs a program (mkfs) and waits; an error carries its first stderr line.
Status RunTool(const std::vector<std::string>& argv);

}  // namespace writelab
