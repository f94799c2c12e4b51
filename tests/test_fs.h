// SPDX-License-Identifier: MIT
// A loop-device ext4 file system a test makes for itself (root): mounted
// with the options given, with a per-device dirty limit (bdi max_bytes and
// strict_limit) when asked, all undone when it goes, and journaled so that
// `writelab cleanup` undoes it if a signal ends the test first.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include "bed_journal.h"
#include "harness.h"

namespace writelab::testing {

// A loop-device ext4 of its own, with mount options and a dirty limit.
class TestFs {
 public:
  explicit TestFs(const std::string& base, const std::string& options, uint64_t dirty_limit)
      : image_(base + ".img"), mnt_(base + ".mnt") {
    // Both its own, new (the directory above may be /var/tmp, where anyone
    // can plant a name): a mount point or image already there is not taken.
    if (mkdir(mnt_.c_str(), 0700) != 0) return;
    made_dir_ = true;
    dir_step_ = BedJournal::Record({"dir", mnt_, "", ""});
    const int image =
        open(image_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (image < 0) return;
    made_image_ = true;
    struct stat st {};
    const bool sized = fstat(image, &st) == 0 && ftruncate(image, off_t{2} << 30) == 0;
    close(image);
    image_step_ = BedJournal::Record(
        {"file", image_, "",
         "inode:" + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino)});
    if (!sized) return;
    dev_ = Shell("losetup -f --show --direct-io=on " + image_ +
                 " 2>/dev/null || losetup -f --show " + image_);
    if (!dev_.starts_with("/dev/loop")) return;
    const std::string inode = BedJournal::BackingInode(image_);
    loop_step_ = BedJournal::Record({"loop", dev_, image_, inode});
    mount_step_ = BedJournal::Record({"mount", mnt_, "", dev_});
    // Its inode tables and journal zeroed now (on a loop device, at once),
    // as writelab's own test beds do: no ext4lazyinit zeroing them later,
    // with a journal handle open that commits wait for, during the test.
    if (Shell("mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 " + dev_ +
              " >/dev/null 2>&1 && mount -o " + options + " " + dev_ + " " + mnt_ +
              " && echo ok") != "ok")
      return;
    mounted_ = true;
    bdi_ = "/sys/block/" + dev_.substr(5) + "/bdi/";
    found_ = Shell("cat " + bdi_ + "max_ratio_fine " + bdi_ + "strict_limit");
    // A limit only where what it replaces could be read (and so restored).
    if (dirty_limit && !(old_fine_ = Shell("cat " + bdi_ + "max_ratio_fine")).empty() &&
        !(old_strict_ = Shell("cat " + bdi_ + "strict_limit")).empty()) {
      fine_step_ =
          BedJournal::Record({"sysfs", bdi_ + "max_ratio_fine", old_fine_, "loop:" + inode});
      strict_step_ =
          BedJournal::Record({"sysfs", bdi_ + "strict_limit", old_strict_, "loop:" + inode});
      Shell("echo 1 > " + bdi_ + "strict_limit; echo " + std::to_string(dirty_limit) + " > " +
            bdi_ + "max_bytes");
    }
  }
  // Each step is marked done only once undone: what failed (a mount still
  // busy) stays in the journal for `writelab cleanup`.
  // A limit that could not be put back keeps the device (and so its image):
  // `writelab cleanup` restores a knob only while its loop device backs the
  // same image, and a device let go would carry the limit to its next user.
  // An image stays, too, while a device that could not be let go backs it.
  ~TestFs() {
    if (!RestoreLimit()) return;
    const bool unmounted = !mounted_ || Shell("umount " + mnt_ + " && echo ok") == "ok";
    if (unmounted) BedJournal::Done(mount_step_);
    if (dev_.starts_with("/dev/loop")) {
      if (Shell("losetup -d " + dev_ + " && echo ok") != "ok") return;
      BedJournal::Done(loop_step_);
    }
    std::error_code ec;
    if (made_image_ && (std::filesystem::remove(image_, ec) || !ec)) BedJournal::Done(image_step_);
    if (!unmounted || !made_dir_) return;  // never into a file system still mounted
    if (std::filesystem::remove(mnt_, ec) || !ec) BedJournal::Done(dir_step_);
  }
  // Puts the device's dirty limit back as it was (the destructor does it
  // too): a test that checks the restore reads it back before the loop
  // device is let go, while no other test can have taken the device.
  // False when it could not (the steps stay in the journal).
  bool RestoreLimit() {
    if (old_fine_.empty()) return true;
    if (Shell("echo " + old_fine_ + " > " + bdi_ + "max_ratio_fine && echo " + old_strict_ + " > " +
              bdi_ + "strict_limit && echo ok") != "ok")
      return false;
    BedJournal::Done(strict_step_);
    BedJournal::Done(fine_step_);
    old_fine_.clear();
    return true;
  }
  bool ok() const { return mounted_; }
  std::string Path(const std::string& name) const { return mnt_ + "/" + name; }
  const std::string& Dir() const { return mnt_; }
  // The device's max_ratio_fine and strict_limit when the test bound it
  // ("1000000\n0" unless someone left a limit on it).
  const std::string& Found() const { return found_; }
  std::string DeviceName() const { return dev_.substr(dev_.find_last_of('/') + 1); }  // "loop3"

 private:
  std::string image_, mnt_, dev_, bdi_, old_fine_, old_strict_, found_;
  bool mounted_ = false, made_dir_ = false, made_image_ = false;
  // Its journal's steps (bed_journal.h), undone in the reverse order.
  BedStep dir_step_ = 0, image_step_ = 0, loop_step_ = 0, mount_step_ = 0, fine_step_ = 0,
          strict_step_ = 0;
};

}  // namespace writelab::testing
