// SPDX-License-Identifier: MIT
#include "writelab/preallocate.h"

#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>

#include "port/linux_compat.h"
#include "port/write_all.h"

namespace writelab {
namespace {

class FdOps final : public PreallocateOps {
 public:
  explicit FdOps(int fd) : fd_(fd) {}
  int Fallocate(int mode, uint64_t offset, uint64_t length) override {
    return fallocate(fd_, mode, static_cast<off_t>(offset), static_cast<off_t>(length)) == 0
               ? 0
               : -errno;
  }
  int WriteZeros(uint64_t offset, uint64_t length) override {
    return FillZeros(fd_, offset, offset + length);
  }
  int GrowTo(uint64_t size) override {
    struct stat st;
    if (fstat(fd_, &st) != 0) return -errno;
    if (static_cast<uint64_t>(st.st_size) >= size) return 0;
    return ftruncate(fd_, static_cast<off_t>(size)) == 0 ? 0 : -errno;
  }
  long FileSystemType() override {
    struct statfs s;
    return fstatfs(fd_, &s) == 0 ? static_cast<long>(s.f_type) : 0;
  }

 private:
  int fd_;
};

struct FallocateCall {
  int flags;         // fallocate(2)'s mode; -1 for the modes without one
  const char* name;  // for errors
};

FallocateCall FallocateOf(PreallocateMode mode) {
  switch (mode) {
    case PreallocateMode::kFallocate:
      return {0, "fallocate"};
    case PreallocateMode::kKeepSize:
      return {FALLOC_FL_KEEP_SIZE, "fallocate FALLOC_FL_KEEP_SIZE"};
    case PreallocateMode::kZeroRange:
      return {FALLOC_FL_ZERO_RANGE, "fallocate FALLOC_FL_ZERO_RANGE"};
    case PreallocateMode::kWriteZeroes:
      return {FALLOC_FL_WRITE_ZEROES, "fallocate FALLOC_FL_WRITE_ZEROES"};
    default:
      return {-1, ""};
  }
}

std::string Range(uint64_t offset, uint64_t length) {
  return "at " + std::to_string(offset) + ", " + std::to_string(length) + " bytes";
}

const char* WhyOf(PreallocateMode mode) {
  switch (mode) {
    case PreallocateMode::kSparse:
      return "size set; no blocks allocated, every write allocates";
    case PreallocateMode::kFallocate:
    case PreallocateMode::kKeepSize:
    case PreallocateMode::kZeroRange:
      return "blocks allocated (unwritten extents on ext4 and xfs: the first write into each "
             "converts it)";
    case PreallocateMode::kWriteZeroes:
      return "written extents, zeroed by the device";
    default:
      return "zeros written: written extents";
  }
}

// One explicit mode.
Result<Preallocation> Run(PreallocateOps& ops, uint64_t offset, uint64_t length,
                          PreallocateMode mode) {
  Preallocation p;
  p.mode = mode;
  p.written_extents = mode == PreallocateMode::kWriteZeroes || mode == PreallocateMode::kZeroFill;
  p.why = std::string(PreallocateModeName(mode)) + ": " + WhyOf(mode);
  const FallocateCall f = FallocateOf(mode);
  const char* call = f.name;
  int rc;
  if (f.flags >= 0) {
    rc = ops.Fallocate(f.flags, offset, length);
  } else if (mode == PreallocateMode::kSparse) {
    call = "ftruncate";
    rc = ops.GrowTo(offset + length);
  } else {
    call = "write zeros";
    rc = ops.WriteZeros(offset, length);
    if (rc == 0) p.zero_bytes = length;
  }
  if (rc != 0) return Unexpected(ErrnoError(-rc, std::string(call) + " " + Range(offset, length)));
  return p;
}

bool Unoffered(int code) { return code == EOPNOTSUPP || code == EINVAL || code == ENOSYS; }

Result<Preallocation> Best(PreallocateOps& ops, uint64_t offset, uint64_t length) {
  if (ops.FileSystemType() == static_cast<long>(BTRFS_SUPER_MAGIC)) {
    auto p = Run(ops, offset, length, PreallocateMode::kFallocate);
    if (p)
      p->why =
          "best: btrfs copies on write, so written zeros would not be overwritten in "
          "place; fallocate reserves the space";
    return p;
  }
  auto p = Run(ops, offset, length, PreallocateMode::kWriteZeroes);
  if (p) {
    p->why = "best: FALLOC_FL_WRITE_ZEROES, written extents zeroed by the device";
    return p;
  }
  if (!Unoffered(p.error().code)) return p;
  const std::string refused = ErrnoName(p.error().code);
  p = Run(ops, offset, length, PreallocateMode::kZeroFill);
  if (p)
    p->why = "best: FALLOC_FL_WRITE_ZEROES refused (" + refused +
             ": the kernel, file system or device does not offer it); wrote zeros instead";
  return p;
}

}  // namespace

const char* PreallocateModeName(PreallocateMode mode) {
  switch (mode) {
    case PreallocateMode::kSparse:
      return "sparse";
    case PreallocateMode::kFallocate:
      return "fallocate";
    case PreallocateMode::kKeepSize:
      return "keep-size";
    case PreallocateMode::kZeroRange:
      return "zero-range";
    case PreallocateMode::kWriteZeroes:
      return "write-zeroes";
    case PreallocateMode::kZeroFill:
      return "zero-fill";
    case PreallocateMode::kBest:
      return "best";
  }
  return "?";
}

Result<Preallocation> Preallocate(PreallocateOps& ops, uint64_t offset, uint64_t length,
                                  PreallocateMode mode) {
  if (length == 0 || offset + length < offset)
    return Unexpected(PlainError("Preallocate: the range must be non-empty and not wrap"));
  if (mode == PreallocateMode::kBest) return Best(ops, offset, length);
  return Run(ops, offset, length, mode);
}

Result<Preallocation> Preallocate(int fd, uint64_t offset, uint64_t length, PreallocateMode mode) {
  FdOps ops(fd);
  return Preallocate(ops, offset, length, mode);
}

}  // namespace writelab
