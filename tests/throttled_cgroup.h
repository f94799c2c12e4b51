// SPDX-License-Identifier: MIT
// A cgroup of a test's own whose members' reads or writes of one device are
// held to a rate (cgroup v1 blkio, else v2 io), journaled as writelab
// journals its own cgroups (testbed/cgroup.h), so that `writelab cleanup`
// removes it, and its rule with it, after a test killed before its end.
#pragma once

#include <sys/sysmacros.h>
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>

#include "bed_journal.h"
#include "testbed/cgroup.h"

namespace writelab::testing {

enum class Throttled { kReads, kWrites };

// A cgroup whose members' reads (or writes) of dev run at bps at most;
// nullptr, and why, where neither hierarchy is to hand.
inline std::unique_ptr<OwnCgroup> ThrottledCgroup(dev_t dev, uint64_t bps, Throttled what,
                                                  std::string& why) {
  UndoJournal* journal = BedJournal::Shared();
  if (!journal) return why = "no journal", nullptr;
  const std::string device = std::to_string(major(dev)) + ":" + std::to_string(minor(dev));
  const bool reads = what == Throttled::kReads;
  for (const bool v1 : {true, false}) {
    auto place = v1 ? FindV1CgroupPlace("blkio") : FindCgroupPlace();
    if (!place) {
      why += place.error().Message() + "; ";
      continue;
    }
    auto made = OwnCgroup::Make(*place, {v1 ? "blkio" : "io"}, *journal);
    if (!made) {
      why += made.error().Message() + "; ";
      continue;
    }
    auto set =
        v1 ? (*made)->Set(
                 reads ? "blkio.throttle.read_bps_device" : "blkio.throttle.write_bps_device",
                 device + " " + std::to_string(bps))
           : (*made)->Set("io.max", device + (reads ? " rbps=" : " wbps=") + std::to_string(bps));
    if (set) return std::move(*made);
    why += set.error().Message() + "; ";
  }
  return nullptr;
}

}  // namespace writelab::testing
