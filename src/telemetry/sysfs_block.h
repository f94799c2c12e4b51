// SPDX-License-Identifier: MIT
// A block device in sysfs, by its number: the one place writelab turns a
// dev_t into /sys/dev/block/MAJ:MIN, finds the disk under a partition, and
// reads a disk's "dev" files and requests in flight (libbpf-tools'
// partitions__get_by_dev, trace_helpers.h). Everything here reads sysfs
// only; "" or nullopt where the device has no entry.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace writelab {

// The device's directory, resolved (/sys/devices/.../vda/vda1), or "".
std::string SysfsBlockDir(dev_t dev);
// Its /sys/class/block name ("vda1"), or "".
std::string SysfsBlockName(dev_t dev);
// The whole disk of a partition (vda for vda1); the device itself otherwise.
dev_t DiskOf(dev_t dev);
// A sysfs "dev" file ("253:1").
std::optional<dev_t> ReadDevFile(const std::string& path);
// /sys/block/NAME's device and those of its partitions.
std::vector<dev_t> DiskAndPartitions(const std::string& name);
// Requests in flight on the disk (its "inflight" file: reads and writes).
std::optional<uint64_t> RequestsInFlight(dev_t disk);

}  // namespace writelab
