// SPDX-License-Identifier: MIT
#include "telemetry/blockdev.h"

#include "telemetry/sysfs_block.h"

#include <blkid/blkid.h>
#include <fcntl.h>
#include <libmount/libmount.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace writelab {

Result<std::string> ProbeSignature(const std::string& device) {
  blkid_probe pr = blkid_new_probe_from_filename(device.c_str());
  if (!pr) return std::unexpected(ErrnoError(errno ? errno : EINVAL, "blkid probe " + device));
  blkid_probe_enable_superblocks(pr, 1);
  blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE);
  blkid_probe_enable_partitions(pr, 1);
  blkid_probe_set_partitions_flags(pr, BLKID_PARTS_MAGIC);
  int rc = blkid_do_safeprobe(pr);
  std::string found;
  const char* value = nullptr;
  if (rc == 0) {
    if (blkid_probe_lookup_value(pr, "TYPE", &value, nullptr) == 0 && value)
      found = value;
    else if (blkid_probe_lookup_value(pr, "PTTYPE", &value, nullptr) == 0 && value)
      found = std::string(value) + " partition table";
    else
      found = "a signature";
  } else if (rc == -2) {
    found = "ambivalent signatures";
  }
  blkid_free_probe(pr);
  if (rc == -1) return std::unexpected(PlainError("blkid could not probe " + device));
  return found;
}

namespace {

// Where the device, or one of its partitions, is mounted; "" when nowhere.
std::string MountedAt(dev_t dev) {
  std::string disk = SysfsBlockDir(dev);
  libmnt_table* tb = mnt_new_table_from_file("/proc/self/mountinfo");
  if (!tb) return "";
  libmnt_iter* it = mnt_new_iter(MNT_ITER_FORWARD);
  libmnt_fs* fs = nullptr;
  std::string where;
  while (where.empty() && it && mnt_table_next_fs(tb, it, &fs) == 0) {
    dev_t d = mnt_fs_get_devno(fs);
    if (d == 0) continue;
    std::string path = d == dev ? disk : SysfsBlockDir(d);
    if (d == dev || (!disk.empty() && path.starts_with(disk + "/")))
      where = mnt_fs_get_target(fs) ? mnt_fs_get_target(fs) : "?";
  }
  mnt_free_iter(it);
  mnt_unref_table(tb);
  return where;
}

}  // namespace

std::string WhyNotSafeToOverwrite(const std::string& device) {
  struct stat st;
  if (stat(device.c_str(), &st) != 0) return device + ": " + strerror(errno);
  if (!S_ISBLK(st.st_mode)) return device + " is not a block device";
  // Said first: a kernel that refuses to open a mounted device for writing
  // answers EPERM, which would hide why.
  if (std::string at = MountedAt(st.st_rdev); !at.empty())
    return device + " is mounted at " + at + " (or a partition of it is)";
  // O_EXCL on a block device fails with EBUSY while a file system, device
  // mapper, md or swap holds it.
  int fd = open(device.c_str(), O_WRONLY | O_EXCL | O_CLOEXEC);
  if (fd < 0)
    return errno == EBUSY ? device + " is in use (mounted or held exclusively)"
                          : device + ": " + strerror(errno);
  close(fd);
  auto sig = ProbeSignature(device);
  if (!sig) return sig.error().Message();
  if (!sig->empty()) return device + " holds " + *sig;
  return "";
}

}  // namespace writelab
