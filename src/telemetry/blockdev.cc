#include "telemetry/blockdev.h"

#include <blkid/blkid.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace writelab {

std::expected<std::string, Error> ProbeSignature(const std::string& device) {
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

std::string WhyNotSafeToOverwrite(const std::string& device) {
  struct stat st;
  if (stat(device.c_str(), &st) != 0) return device + ": " + strerror(errno);
  if (!S_ISBLK(st.st_mode)) return device + " is not a block device";
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
