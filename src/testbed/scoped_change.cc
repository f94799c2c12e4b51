// SPDX-License-Identifier: MIT
#include "testbed/scoped_change.h"

#include <fcntl.h>
#include <linux/loop.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>

#include "io/file.h"
#include "telemetry/procfs.h"

namespace writelab {

Result<ScopedChange> ScopedChange::Make(UndoJournal& journal, UndoStep undo,
                                        const std::function<Status()>& act) {
  auto id = journal.Record(undo);
  if (!id) return std::unexpected(id.error());
  ScopedChange change(&journal, std::move(undo), *id);
  if (Status s = act(); !s) {
    if (s.error().code == EEXIST) {  // the object was there before: not ours to undo
      journal.Done(*id);
      change.journal_ = nullptr;
    }
    return std::unexpected(s.error());  // else ~change undoes
  }
  return change;
}

ScopedChange::ScopedChange(ScopedChange&& other) noexcept
    : journal_(std::exchange(other.journal_, nullptr)),
      step_(std::move(other.step_)),
      id_(other.id_),
      locked_device_(std::move(other.locked_device_)) {}

ScopedChange::~ScopedChange() { Revert(); }

Status ScopedChange::Revert() {
  if (!journal_) return {};
  Status s = Undo(step_);
  if (s) journal_->Done(id_);  // a failed undo stays pending for `writelab cleanup`
  // A failed undo keeps the lock until exit: no other run may take the device
  // while its settings are not what they were.
  if (s && !locked_device_.empty()) journal_->UnlockDevice(locked_device_);
  journal_ = nullptr;
  return s;
}

namespace {

// "loop:INODE" for a loop device's knob (its backing file's inode, from
// the device itself), so that cleanup does not restore it onto a loop
// device another run took since; "diskseq:N" for another disk (the
// kernel's sequence number of the disk, new for each disk it adds), so
// that a knob is not restored onto a disk that took the name since. ""
// when neither can be read.
std::string SysfsCheck(const std::string& device) {
  if (!device.starts_with("loop")) {
    auto seq = ReadLine("/sys/block/" + device + "/diskseq");
    return seq ? "diskseq:" + *seq : "";
  }
  auto fd = OpenFile("/dev/" + device, O_RDONLY | O_NOFOLLOW);
  loop_info64 info{};
  if (!fd || ioctl(fd->get(), LOOP_GET_STATUS64, &info) != 0) return "";
  return "loop:" + std::to_string(info.lo_inode);
}

}  // namespace

Result<ScopedChange> SetSysfs(UndoJournal& journal, const std::string& path,
                              const std::string& value) {
  std::string device = SysfsDevice(path);
  if (device.empty()) return std::unexpected(PlainError(path + ": not a knob writelab may set"));
  if (Status s = journal.LockDevice(device); !s) return std::unexpected(s.error());
  auto old = ReadLine(path);
  if (!old) {
    journal.UnlockDevice(device);
    return std::unexpected(ErrnoError(errno ? errno : ENOENT, "read " + path));
  }
  if (auto open = old->find('['); open != std::string::npos)  // "none [mq-deadline] kyber"
    old = old->substr(open + 1, old->find(']') - open - 1);
  auto change =
      ScopedChange::Make(journal, {"sysfs", path, *old, SysfsCheck(device)}, [&]() -> Status {
        int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0) return std::unexpected(ErrnoError(errno, "open " + path));
        ssize_t n = write(fd, value.data(), value.size());
        int err = errno;
        close(fd);
        if (n < 0) return std::unexpected(ErrnoError(err, "write '" + value + "' to " + path));
        return {};
      });
  if (!change) {
    journal.UnlockDevice(device);
    return change;
  }
  change->locked_device_ = device;
  return change;
}

}  // namespace writelab
