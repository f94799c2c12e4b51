// SPDX-License-Identifier: MIT
// Readers for /proc/meminfo and /sys/block/DEV/stat. The parsers are pure
// (tested on fixed text); the readers keep the file open and re-read it with
// pread into a fixed buffer, so a sampler thread can poll cheaply.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "writelab/unique_fd.h"

namespace writelab {

struct MemSample {
  uint64_t dirty = 0;      // bytes (Dirty:)
  uint64_t writeback = 0;  // bytes (Writeback:)
  uint64_t cached = 0;     // bytes (Cached:)
  uint64_t total = 0;      // bytes (MemTotal:)
  uint64_t available = 0;  // bytes (MemAvailable:)
};

// Writes in /sys/block/DEV/stat (Documentation/block/stat.rst).
struct BlockSample {
  uint64_t writes = 0;         // write I/Os completed
  uint64_t write_merges = 0;   // write requests merged into others
  uint64_t write_sectors = 0;  // 512-byte sectors written
  uint64_t write_ticks_ms = 0;
  uint64_t in_flight = 0;  // requests issued to the device, not completed
};

std::optional<MemSample> ParseMeminfo(std::string_view text);
std::optional<BlockSample> ParseBlockStat(std::string_view text);

// Reads a whole small file ("/proc/sys/vm/dirty_ratio"); nullopt if unreadable.
std::optional<std::string> ReadSmallFile(const std::string& path);

// The processes under root now (its descendants, root included), from /proc.
std::vector<pid_t> Descendants(pid_t root);
// The first line of a file with trailing whitespace removed.
std::optional<std::string> ReadLine(const std::string& path);

// One of a process's descriptors (link: /proc/PID/fd/N) seen through one
// O_PATH handle of the caller's own, so that its stat and its path are of
// the same file (no open of the file itself runs). A stat and a readlink
// of the link, two calls apart, can describe two files: the process may put
// another on N in between (dd puts its output on fd 1). nullopt when the
// descriptor is gone or cannot be looked at.
struct DescriptorView {
  UniqueFd handle;  // O_PATH
  struct stat st;
  std::string path;
};
std::optional<DescriptorView> ViewDescriptor(const std::string& link);

class MeminfoReader {
 public:
  MeminfoReader();
  std::optional<MemSample> Read();

 private:
  UniqueFd fd_;
};

class BlockStatReader {
 public:
  explicit BlockStatReader(const std::string& device);  // "vda"; "" reads nothing
  std::optional<BlockSample> Read();
  bool valid() const { return fd_.valid(); }

 private:
  UniqueFd fd_;
};

}  // namespace writelab
