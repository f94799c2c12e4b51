// SPDX-License-Identifier: MIT
// Preallocate: make room in a file before writing into it, and say what was
// done and why.
//
// Which way is right depends on what the writes do next. The prealloc
// experiment (docs/prealloc.md) measured 500 O_DSYNC|O_DIRECT 4 KiB writes at
// a 64 KiB stride into a 64 MiB file on ext4 test beds, per preparation:
//
//   ext4 data=ordered    fallocate 509 ms, zero-fill  97.6 ms (5.2x faster)
//   ext4 no journal      fallocate 402 ms, zero-fill   196 ms (2.1x)
//   ext4 data=journal    fallocate 899 ms, zero-fill   830 ms (every write
//                        is journaled whatever the extents: nearly flat)
//
// fallocate, keep-size and zero-range leave *unwritten* extents on ext4 and
// xfs: the first write into each one converts it, a metadata change that a
// synchronous write must wait to journal (the 2012 linux-fsdevel thread).
// Written zeros (write-zeroes, zero-fill) cost the zeros once, up front, and
// then an overwrite changes no metadata. On copy-on-write file systems
// (btrfs) every overwrite allocates anyway, so written zeros buy nothing.
//
// Modes:
//   kSparse      ftruncate up to offset + length if the file is shorter;
//                allocates nothing.
//   kFallocate   fallocate(fd, 0, ..): allocated, unwritten extents; the
//                size grows to cover the range.
//   kKeepSize    fallocate(FALLOC_FL_KEEP_SIZE): as kFallocate, size kept.
//   kZeroRange   fallocate(FALLOC_FL_ZERO_RANGE): the range reads as zeros
//                (existing data in it is gone); unwritten on ext4.
//   kWriteZeroes fallocate(FALLOC_FL_WRITE_ZEROES), Linux 6.17: written
//                extents zeroed by the device; only where the device can do
//                that quickly (write_zeroes_unmap_max_bytes > 0).
//   kZeroFill    buffered pwrite of zeros over the range, as dd does:
//                written extents, at the cost of writing every byte.
//   kBest        written zeros ahead of an appender, the fastest way the
//                kernel and file system accept: kWriteZeroes, else kZeroFill
//                when it fails with EOPNOTSUPP, EINVAL or ENOSYS (kernel,
//                file system or device without it); on btrfs kFallocate.
// kZeroRange, kWriteZeroes and kZeroFill overwrite what the range held.
//
// Nothing falls back silently: an explicit mode that fails is an error
// naming the call; kBest says in `why` what it tried and what it did.
#pragma once

#include <cstdint>
#include <string>

#include "writelab/error.h"

namespace writelab {

enum class PreallocateMode {
  kSparse,
  kFallocate,
  kKeepSize,
  kZeroRange,
  kWriteZeroes,
  kZeroFill,
  kBest
};

// "sparse", "fallocate", "keep-size", "zero-range", "write-zeroes",
// "zero-fill", "best".
const char* PreallocateModeName(PreallocateMode mode);

struct Preallocation {
  PreallocateMode mode = PreallocateMode::kSparse;  // what was done; never kBest
  bool written_extents = false;                     // the range now holds written zeros
  uint64_t zero_bytes = 0;                          // zeros written by the library (kZeroFill)
  std::string why;                                  // one line: what was tried and why this
};

// The system calls behind Preallocate, so that a caller can time them, or a
// test fail them. Each returns 0 or -errno.
class PreallocateOps {
 public:
  virtual ~PreallocateOps() = default;
  virtual int Fallocate(int mode, uint64_t offset, uint64_t length) = 0;
  virtual int WriteZeros(uint64_t offset, uint64_t length) = 0;
  // ftruncate to size if the file is shorter.
  virtual int GrowTo(uint64_t size) = 0;
  // statfs's f_type of the file's file system, 0 if unknown.
  virtual long FileSystemType() = 0;
};

// On the file open for writing as fd. length > 0.
Result<Preallocation> Preallocate(int fd, uint64_t offset, uint64_t length, PreallocateMode mode);
Result<Preallocation> Preallocate(PreallocateOps& ops, uint64_t offset, uint64_t length,
                                  PreallocateMode mode);

}  // namespace writelab
