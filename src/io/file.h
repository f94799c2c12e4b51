// SPDX-License-Identifier: MIT
// Files and buffers for experiments: opening with context-rich errors,
// creating files that are writelab's own, and aligned buffers for O_DIRECT.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <expected>
#include <memory>
#include <string>

#include "writelab/error.h"
#include "writelab/unique_fd.h"

namespace writelab {

Result<UniqueFd> OpenFile(const std::string& path, int flags, mode_t mode = 0644);

// 64 random bits (getrandom) as 16 hex digits: a name nobody can guess ahead.
std::string RandomHex();

// Creates a new file "DIR/writelab-PREFIX-PID-N-RANDOM" (RANDOM: RandomHex)
// with O_CREAT|O_EXCL|O_NOFOLLOW, so it never touches a file that writelab
// did not make, and a user who pre-creates names for future PIDs cannot make
// a run fail with EEXIST. Sets *path. Use the
// descriptor from then on (ReopenFd for other flags): in a directory others
// can write, the name may be swapped, the open file cannot. Remove it with
// RemoveOwnFile (io/own_files.h), or KeepOwnFile to leave it.

Result<UniqueFd> CreateOwnFile(const std::string& dir, const std::string& prefix, int extra_flags,
                               std::string* path);

// A new open file description of the file fd refers to, with other flags
// (O_DIRECT, O_SYNC), through /proc/self/fd: the same inode, whatever its
// name now points to. path is for messages.
Result<UniqueFd> ReopenFd(int fd, int flags, const std::string& path);

// A heap buffer aligned for O_DIRECT (alignment a power of two).
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  AlignedBuffer(size_t size, size_t alignment);
  std::byte* data() { return data_.get(); }
  const std::byte* data() const { return data_.get(); }
  size_t size() const { return size_; }
  // Fills with a non-repeating, non-zero byte pattern derived from seed, so
  // no layer can take a shortcut for zero pages.
  void FillPattern(uint64_t seed);

 private:
  struct Free {
    void operator()(std::byte* p) const;
  };
  std::unique_ptr<std::byte, Free> data_;
  size_t size_ = 0;
};

// The directory holding path: "." for a bare name, "/" for "/name".
std::string ParentDir(const std::string& path);

}  // namespace writelab
