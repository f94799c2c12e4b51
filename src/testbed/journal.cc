#include "testbed/journal.h"

#include <fcntl.h>
#include <linux/loop.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "io/file.h"
#include "telemetry/procfs.h"

namespace writelab {
namespace {

using nlohmann::json;

Status UndoLoop(const UndoStep& s) {
  std::string name = s.path.substr(s.path.find_last_of('/') + 1);
  auto backing = ReadLine("/sys/block/" + name + "/loop/backing_file");
  if (!backing || *backing != s.value) return {};  // detached already, or someone else's now
  auto fd = OpenFile(s.path, O_RDONLY);
  if (!fd) return std::unexpected(fd.error());
  if (ioctl(fd->get(), LOOP_CLR_FD, 0) != 0 && errno != ENXIO)
    return std::unexpected(ErrnoError(errno, "detach " + s.path));
  return {};
}

Status UndoMount(const UndoStep& s) {
  if (umount2(s.path.c_str(), 0) == 0 || errno == EINVAL || errno == ENOENT) return {};
  if (errno == EBUSY && umount2(s.path.c_str(), MNT_DETACH) == 0) return {};
  return std::unexpected(ErrnoError(errno, "unmount " + s.path));
}

Status UndoSysfs(const UndoStep& s) {
  int fd = ::open(s.path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return errno == ENOENT ? Status{} : std::unexpected(ErrnoError(errno, "open " + s.path));
  UniqueFd guard(fd);
  if (write(fd, s.value.data(), s.value.size()) < 0)
    return std::unexpected(ErrnoError(errno, "restore " + s.path + " to " + s.value));
  return {};
}

}  // namespace

Status Undo(const UndoStep& s) {
  if (s.op == "file") {
    if (unlink(s.path.c_str()) == 0 || errno == ENOENT) return {};
    return std::unexpected(ErrnoError(errno, "remove " + s.path));
  }
  if (s.op == "dir") {
    if (rmdir(s.path.c_str()) == 0 || errno == ENOENT) return {};
    return std::unexpected(ErrnoError(errno, "remove directory " + s.path));
  }
  if (s.op == "loop") return UndoLoop(s);
  if (s.op == "mount") return UndoMount(s);
  if (s.op == "sysfs") return UndoSysfs(s);
  return std::unexpected(PlainError("unknown undo step '" + s.op + "'"));
}

std::expected<std::unique_ptr<UndoJournal>, Error> UndoJournal::Open(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return std::unexpected(ErrnoError(ec.value(), "create " + dir));
  std::string path = dir + "/journal-" + std::to_string(getpid());
  // A journal with our PID is a dead process's (PIDs are reused): finish its
  // undo before starting ours, so its steps are not lost.
  if (auto stale = PendingSteps(path)) {
    for (auto it = stale->rbegin(); it != stale->rend(); ++it) {
      if (Status s = Undo(*it); !s)
        return std::unexpected(PlainError("stale journal " + path + ": " + s.error().Message() +
                                          " (run writelab cleanup)"));
    }
  }
  auto fd = OpenFile(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0600);
  if (!fd) return std::unexpected(fd.error());
  return std::unique_ptr<UndoJournal>(new UndoJournal(path, std::move(*fd)));
}

UndoJournal::~UndoJournal() {
  if (pending_ == 0) unlink(path_.c_str());
}

Status UndoJournal::Append(const std::string& line) {
  std::string text = line + "\n";
  if (write(fd_.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()))
    return std::unexpected(ErrnoError(errno ? errno : EIO, "write " + path_));
  if (fdatasync(fd_.get()) != 0) return std::unexpected(ErrnoError(errno, "fdatasync " + path_));
  return {};
}

std::expected<int, Error> UndoJournal::Record(const UndoStep& step) {
  int id = next_id_++;
  json j = {{"id", id}, {"op", step.op}, {"path", step.path}, {"value", step.value}};
  if (Status s = Append(j.dump()); !s) return std::unexpected(s.error());
  ++pending_;
  return id;
}

void UndoJournal::Done(int id) {
  if (Append(json{{"done", id}}.dump())) --pending_;
}

std::expected<std::vector<UndoStep>, Error> PendingSteps(const std::string& journal_path) {
  std::ifstream in(journal_path);
  if (!in) return std::unexpected(ErrnoError(errno, "open " + journal_path));
  std::map<int, UndoStep> open;
  std::string line;
  while (std::getline(in, line)) {
    json j = json::parse(line, nullptr, false);
    if (j.is_discarded()) continue;  // a line cut short by a crash
    if (j.contains("done")) {
      open.erase(j["done"].get<int>());
    } else if (j.contains("id")) {
      open[j["id"].get<int>()] = {j.value("op", ""), j.value("path", ""), j.value("value", "")};
    }
  }
  std::vector<UndoStep> steps;
  for (auto& [id, step] : open) steps.push_back(std::move(step));
  return steps;
}

CleanupReport CleanupStale(const std::string& dir) {
  CleanupReport report;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    if (!name.starts_with("journal-")) continue;
    int pid = std::atoi(name.c_str() + 8);
    if (pid > 0 && pid != getpid() && kill(pid, 0) == 0) {
      report.skipped.push_back(entry.path().string() + " (writelab " + std::to_string(pid) +
                               " is still running)");
      continue;
    }
    auto steps = PendingSteps(entry.path().string());
    if (!steps && steps.error().code == ENOENT) continue;  // its writelab just finished
    if (!steps) {
      report.errors.push_back(steps.error().Message());
      continue;
    }
    bool ok = true;
    for (auto it = steps->rbegin(); it != steps->rend(); ++it) {
      if (Status s = Undo(*it); !s) {
        report.errors.push_back(s.error().Message());
        ok = false;
      } else {
        report.undone.push_back(it->op + " " + it->path);
      }
    }
    if (ok) std::filesystem::remove(entry.path(), ec);
  }
  return report;
}

}  // namespace writelab
