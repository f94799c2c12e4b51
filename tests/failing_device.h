// SPDX-License-Identifier: MIT
// Devices that fail writes, for error-path tests (root: tmpfs, loop, mkfs,
// mount). Everything is made under the test's own directory and undone by
// the destructor, and journaled (bed_journal.h) for `writelab cleanup` if a
// signal ends the test first.
//   FullTmpfs    a tmpfs of 1 MiB, filled: a write(2) into it fails with
//                ENOSPC at once (what stdio's fclose must report).
//   FailingExt4  an ext4 on a loop device over a file on a tmpfs of its own,
//                with the blocks under a file's first bytes punched out of
//                the image and the tmpfs filled: the writes succeed into
//                the page cache, and their writeback fails (ENOSPC from the
//                loop device), as a failing disk's does with EIO. Only the
//                file's own blocks fail: the journal and metadata are
//                written where the image is allocated.
#pragma once

#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "bed_journal.h"
#include "harness.h"

namespace writelab::testing {

// Fills the file system under dir (a file "fill" in it) until a write fails.
inline void FillUp(const std::string& dir) {
  const std::string fill = dir + "/fill";
  int fd = open(fill.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return;
  std::vector<char> block(1 << 16, 'f');
  for (size_t n = block.size(); n >= 1;) {
    if (write(fd, block.data(), n) < 0) n /= 2;  // smaller, until not even a byte fits
  }
  close(fd);
}

// A tmpfs mount's source name of this bed's own ("writelab-test-full-PID-N"):
// the journal's check of the mount, which a dead test's journal must not
// find true of a live test's tmpfs at the same path.
inline std::string TmpfsSource(const char* kind) {
  static std::atomic<int> made{0};
  return std::string(kind) + "-" + std::to_string(getpid()) + "-" + std::to_string(++made);
}

// A tmpfs of `size` (mount(8)'s size=) at dir, of the test's own.
class Tmpfs {
 public:
  Tmpfs(const std::string& dir, const std::string& size) : dir_(dir) {
    std::filesystem::create_directories(dir_);
    const std::string source = TmpfsSource("writelab-test");
    step_ = BedJournal::Record({"mount", dir_, "", source});
    mounted_ =
        Shell("mount -t tmpfs -o size=" + size + " " + source + " " + dir_ + " && echo ok") == "ok";
  }
  ~Tmpfs() {
    if (!mounted_ || Shell("umount " + dir_ + " && echo ok") == "ok") BedJournal::Done(step_);
  }
  bool ok() const { return mounted_; }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  bool mounted_ = false;
  BedStep step_ = 0;  // the mount's, in the test's journal (bed_journal.h)
};

class FullTmpfs {
 public:
  explicit FullTmpfs(const std::string& dir) : dir_(dir) {
    std::filesystem::create_directories(dir_);
    const std::string source = TmpfsSource("writelab-test-full");
    step_ = BedJournal::Record({"mount", dir_, "", source});
    mounted_ = Shell("mount -t tmpfs -o size=1M " + source + " " + dir_ + " && echo ok") == "ok";
    if (mounted_) FillUp(dir_);
  }
  ~FullTmpfs() {
    if (!mounted_ || Shell("umount " + dir_ + " && echo ok") == "ok") BedJournal::Done(step_);
  }
  bool ok() const { return mounted_; }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  bool mounted_ = false;
  BedStep step_ = 0;  // the mount's, in the test's journal (bed_journal.h)
};

class FailingExt4 {
 public:
  // Under dir: an ext4 of 64 MiB holding `file` (size bytes, written and
  // synced), whose first `fail` bytes can no longer be written back. ok()
  // says whether it was made; why() says why not.
  FailingExt4(const std::string& dir, uint64_t size, uint64_t fail) : dir_(dir) {
    std::filesystem::create_directories(dir_ + "/tmpfs");
    std::filesystem::create_directories(dir_ + "/mnt");
    const std::string source = TmpfsSource("writelab-test-failing");
    tmpfs_step_ = BedJournal::Record({"mount", dir_ + "/tmpfs", "", source});
    if (!Step("mount -t tmpfs -o size=96M " + source + " " + dir_ + "/tmpfs")) return;
    tmpfs_ = true;
    const std::string image = dir_ + "/tmpfs/image";
    if (!Step("truncate -s 64M " + image + " && dd if=/dev/zero of=" + image +
              " bs=1M count=64 conv=notrunc status=none"))
      return;
    loop_ = Shell("losetup -f --show " + image);
    if (!loop_.starts_with("/dev/loop")) {
      Fail("losetup: " + loop_);
      return;
    }
    loop_step_ = BedJournal::Record({"loop", loop_, image, BedJournal::BackingInode(image)});
    mount_step_ = BedJournal::Record({"mount", dir_ + "/mnt", "", loop_});
    if (!Step("mkfs.ext4 -q -F " + loop_ + " && mount " + loop_ + " " + dir_ + "/mnt")) return;
    mounted_ = true;
    file_ = dir_ + "/mnt/victim";
    if (!Step("dd if=/dev/urandom of=" + file_ + " bs=1M count=" + std::to_string(size >> 20) +
              " conv=fsync status=none"))
      return;
    if (!PunchUnder(image, fail)) return;
    FillUp(dir_ + "/tmpfs");
    ok_ = true;
  }
  ~FailingExt4() {
    // Each step marked done only once undone (bed_journal.h).
    if (!mounted_ || Shell("umount " + dir_ + "/mnt && echo ok") == "ok")
      BedJournal::Done(mount_step_);
    if (loop_.starts_with("/dev/loop") && Shell("losetup -d " + loop_ + " && echo ok") == "ok")
      BedJournal::Done(loop_step_);
    if (!tmpfs_ || Shell("umount " + dir_ + "/tmpfs && echo ok") == "ok")
      BedJournal::Done(tmpfs_step_);
  }
  bool ok() const { return ok_; }
  const std::string& why() const { return why_; }
  const std::string& file() const { return file_; }
  const std::string& mount() const { return mount_; }

 private:
  bool Step(const std::string& cmd) {
    const std::string out = Shell("(" + cmd + ") 2>&1 && echo step-ok");
    if (out.ends_with("step-ok")) return true;
    Fail(cmd + ": " + out);
    return false;
  }
  void Fail(const std::string& why) { why_ = why; }

  // The file's physical extents (FIEMAP, on the ext4): where its bytes sit
  // on the loop device, which is where they sit in the image.
  bool PunchUnder(const std::string& image, uint64_t fail) {
    int fd = open(file_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Fail("open " + file_), false;
    constexpr int kExtents = 64;
    std::vector<char> buf(sizeof(fiemap) + kExtents * sizeof(fiemap_extent));
    auto* map = reinterpret_cast<fiemap*>(buf.data());
    map->fm_start = 0;
    map->fm_length = fail;
    map->fm_flags = FIEMAP_FLAG_SYNC;
    map->fm_extent_count = kExtents;
    const int rc = ioctl(fd, FS_IOC_FIEMAP, map);
    close(fd);
    if (rc != 0 || map->fm_mapped_extents == 0) return Fail("FIEMAP of " + file_), false;
    int img = open(image.c_str(), O_RDWR | O_CLOEXEC);
    if (img < 0) return Fail("open " + image), false;
    bool punched = true;
    for (uint32_t i = 0; i < map->fm_mapped_extents; ++i) {
      const fiemap_extent& e = map->fm_extents[i];
      const uint64_t len =
          std::min<uint64_t>(e.fe_length, fail > e.fe_logical ? fail - e.fe_logical : 0);
      if (len && fallocate(img, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                           static_cast<off_t>(e.fe_physical), static_cast<off_t>(len)) != 0)
        punched = false;
    }
    close(img);
    if (!punched) Fail("punch the image under " + file_);
    return punched;
  }

  std::string dir_, loop_, file_, why_;
  std::string mount_ = dir_ + "/mnt";
  bool tmpfs_ = false, mounted_ = false, ok_ = false;
  BedStep tmpfs_step_ = 0, loop_step_ = 0,
          mount_step_ = 0;  // in the test's journal (bed_journal.h)
};

}  // namespace writelab::testing
