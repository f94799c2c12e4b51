// SPDX-License-Identifier: MIT
#include "testbed/dirty_limit.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "io/file.h"
#include "telemetry/procfs.h"

namespace writelab {

Status LimitDeviceDirty(const std::string& device, uint64_t bytes, UndoJournal& journal,
                        std::vector<ScopedChange>& changes) {
  const std::string bdi = "/sys/block/" + device + "/bdi/";  // follows the device's own link
  auto fine = ReadLine(bdi + "max_ratio_fine");
  if (!fine)
    return std::unexpected(ErrnoError(errno ? errno : ENOENT, "read " + bdi + "max_ratio_fine"));
  for (const auto& [knob, value] :
       {std::pair{"max_ratio_fine", *fine}, {"strict_limit", std::string("1")}}) {
    auto change = SetSysfs(journal, bdi + knob, value);
    if (!change) return std::unexpected(change.error());
    changes.push_back(std::move(*change));
  }
  auto fd = OpenFile(bdi + "max_bytes", O_WRONLY | O_NOFOLLOW);
  if (!fd) return std::unexpected(fd.error());
  const std::string value = std::to_string(bytes);
  if (write(fd->get(), value.data(), value.size()) < 0)
    return std::unexpected(ErrnoError(errno, "write " + value + " to " + bdi + "max_bytes"));
  return {};
}

}  // namespace writelab
