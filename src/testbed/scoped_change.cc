#include "testbed/scoped_change.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "telemetry/procfs.h"

namespace writelab {

std::expected<ScopedChange, Error> ScopedChange::Make(UndoJournal& journal, UndoStep undo,
                                                      const std::function<Status()>& act) {
  auto id = journal.Record(undo);
  if (!id) return std::unexpected(id.error());
  ScopedChange change(&journal, std::move(undo), *id);
  if (Status s = act(); !s) return std::unexpected(s.error());  // ~change undoes
  return change;
}

ScopedChange::ScopedChange(ScopedChange&& other) noexcept
    : journal_(std::exchange(other.journal_, nullptr)),
      step_(std::move(other.step_)),
      id_(other.id_) {}

ScopedChange::~ScopedChange() { Revert(); }

Status ScopedChange::Revert() {
  if (!journal_) return {};
  Status s = Undo(step_);
  if (s) journal_->Done(id_);  // a failed undo stays pending for `writelab cleanup`
  journal_ = nullptr;
  return s;
}

std::expected<ScopedChange, Error> SetSysfs(UndoJournal& journal, const std::string& path,
                                            const std::string& value) {
  auto old = ReadLine(path);
  if (!old) return std::unexpected(ErrnoError(errno ? errno : ENOENT, "read " + path));
  if (auto open = old->find('['); open != std::string::npos)  // "none [mq-deadline] kyber"
    old = old->substr(open + 1, old->find(']') - open - 1);
  return ScopedChange::Make(journal, {"sysfs", path, *old}, [&]() -> Status {
    int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return std::unexpected(ErrnoError(errno, "open " + path));
    ssize_t n = write(fd, value.data(), value.size());
    int err = errno;
    close(fd);
    if (n < 0) return std::unexpected(ErrnoError(err, "write '" + value + "' to " + path));
    return {};
  });
}

}  // namespace writelab
