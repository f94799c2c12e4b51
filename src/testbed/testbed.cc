// SPDX-License-Identifier: MIT
#include "testbed/testbed.h"

#include "testbed/dirty_limit.h"

#include <fcntl.h>
#include <libmount/libmount.h>
#include <linux/loop.h>
#include <spawn.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/units.h"
#include "io/file.h"
#include "io/trusted_dir.h"
#include "port/write_all.h"
#include "telemetry/procfs.h"

extern char** environ;

namespace writelab {
namespace {

std::string UniqueName(const std::string& prefix) {
  static std::atomic<int> counter{0};
  return prefix + "-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
}

std::vector<std::string> Split(std::string_view s, char sep) {
  std::vector<std::string> parts;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t end = s.find(sep, pos);
    if (end == std::string_view::npos) end = s.size();
    parts.emplace_back(s.substr(pos, end - pos));
    pos = end + 1;
  }
  return parts;
}

std::vector<std::string> MkfsCommand(const TestbedSpec& spec, const std::string& dev) {
  if (spec.fs == "ext4") {
    // Initialise inode tables and journal now, not in the background during
    // the measurement.
    // 4 KiB blocks whatever the size (small file systems would get 1 KiB).
    std::vector<std::string> argv = {
        "mkfs.ext4", "-F", "-q", "-b", "4096", "-E", "lazy_itable_init=0,lazy_journal_init=0"};
    if (spec.nojournal) argv.insert(argv.end(), {"-O", "^has_journal"});
    argv.push_back(dev);
    return argv;
  }
  if (spec.fs == "xfs") return {"mkfs.xfs", "-f", "-q", dev};
  return {"mkfs.btrfs", "-f", "-q", dev};
}

std::string Join(const std::vector<std::string>& v, char sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : std::string(1, sep)) + s;
  return out;
}

// libmount turns generic options (noatime, sync, ro) into mount flags and
// passes the rest to the file system, as mount(8) does.
Status MountWithLibmount(const std::string& source, const std::string& target,
                         const std::string& fs, const std::string& options) {
  libmnt_context* cxt = mnt_new_context();
  if (!cxt) return std::unexpected(ErrnoError(ENOMEM, "mnt_new_context"));
  mnt_context_disable_helpers(cxt, 1);
  mnt_context_disable_mtab(cxt, 1);
  mnt_context_set_source(cxt, source.c_str());
  mnt_context_set_target(cxt, target.c_str());
  mnt_context_set_fstype(cxt, fs.c_str());
  if (!options.empty()) mnt_context_set_options(cxt, options.c_str());
  int rc = mnt_context_mount(cxt);
  int err = mnt_context_syscall_called(cxt) ? mnt_context_get_syscall_errno(cxt) : 0;
  mnt_free_context(cxt);
  if (rc == 0 && err == 0) return {};
  if (err == 0) err = rc < 0 ? -rc : EINVAL;
  return std::unexpected(
      ErrnoError(err, "mount " + fs + (options.empty() ? "" : " -o " + options) + " on " + target));
}

Status FillWithZeros(int fd, uint64_t size, const std::string& path,
                     const std::atomic<bool>* interrupted) {
  if (int rc = FillZeros(fd, 0, size, interrupted); rc < 0)
    return std::unexpected(rc == -EINTR && interrupted && interrupted->load()
                               ? PlainError("interrupted while filling " + path)
                               : ErrnoError(-rc, "fill " + path));
  if (fsync(fd) != 0) return std::unexpected(ErrnoError(errno, "fsync " + path));
  return {};
}

// Creates the backing image in the scratch directory through its descriptor:
// O_EXCL|O_NOFOLLOW, then checked to be the regular file just made.
Result<UniqueFd> CreateImage(int dir_fd, const std::string& name, const std::string& path) {
  int fd = openat(dir_fd, name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return std::unexpected(ErrnoError(errno, "create " + path));
  UniqueFd image(fd);
  struct stat st;
  if (fstat(fd, &st) != 0) return std::unexpected(ErrnoError(errno, "fstat " + path));
  if (!S_ISREG(st.st_mode) || st.st_nlink != 1 || st.st_uid != geteuid() || st.st_size != 0)
    return std::unexpected(PlainError(path + " is not the new regular file writelab made"));
  return image;
}

}  // namespace

std::expected<std::vector<TestbedSpec>, std::string> ParseTestbeds(std::string_view list) {
  std::vector<TestbedSpec> specs;
  if (list.empty()) return std::unexpected("--testbed: empty; give e.g. ext4:data=ordered,xfs");
  for (const std::string& item : Split(list, ',')) {
    if (item.empty())
      return std::unexpected("--testbed: an empty test bed in '" + std::string(list) + "'");
    std::vector<std::string> parts = Split(item, ':');
    TestbedSpec spec;
    spec.label = item;
    spec.fs = parts[0];
    if (spec.fs != "ext4" && spec.fs != "xfs" && spec.fs != "btrfs" && spec.fs != "tmpfs" &&
        spec.fs != "raw")
      return std::unexpected("--testbed: '" + item +
                             "': must be ext4, xfs, btrfs, tmpfs or raw (a bare loop device)");
    if (spec.fs == "raw" && parts.size() > 1)
      return std::unexpected("--testbed: '" + item + "': raw takes no options");
    for (size_t i = 1; i < parts.size(); ++i) {
      if (parts[i].empty()) return std::unexpected("--testbed: '" + item + "': empty option");
      if (parts[i] == "nojournal") {
        if (spec.fs != "ext4")
          return std::unexpected("--testbed: '" + item + "': nojournal is for ext4");
        spec.nojournal = true;
      } else if (parts[i].starts_with("dirty=")) {
        auto size = ParseSize(parts[i].substr(6));
        if (!size || *size < (1u << 20) || spec.fs == "tmpfs")
          return std::unexpected("--testbed: '" + item +
                                 "': dirty=SIZE takes a size of at least 1M, on a loop device");
        spec.dirty_max = *size;
      } else {
        spec.mount_options.push_back(parts[i]);
      }
    }
    specs.push_back(std::move(spec));
  }
  return specs;
}

Status RunTool(const std::vector<std::string>& argv) {
  // stderr goes to an anonymous memory file: nothing on disk to plant a link at.
  UniqueFd log(memfd_create("writelab-tool-stderr", MFD_CLOEXEC));
  if (!log) return std::unexpected(ErrnoError(errno, "memfd_create"));
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, log.get(), 2);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid;
  int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return std::unexpected(ErrnoError(rc, "run " + argv[0]));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  std::string err(4096, '\0');
  ssize_t n = pread(log.get(), err.data(), err.size(), 0);
  err.resize(n > 0 ? static_cast<size_t>(n) : 0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return {};
  std::string first = err.substr(0, err.find('\n'));  // the reason comes first, usage after
  return std::unexpected(
      PlainError(Join(argv, ' ') + " failed" + (first.empty() ? "" : ": " + first)));
}

Status Testbed::AttachLoop(const std::string& backing, int backing_fd, UndoJournal& journal) {
  struct stat st;
  if (fstat(backing_fd, &st) != 0) return std::unexpected(ErrnoError(errno, "fstat " + backing));
  auto ctl = OpenFile("/dev/loop-control", O_RDWR);
  if (!ctl) return std::unexpected(ctl.error());
  for (int attempt = 0; attempt < 8; ++attempt) {
    int n = ioctl(ctl->get(), LOOP_CTL_GET_FREE);
    if (n < 0) return std::unexpected(ErrnoError(errno, "LOOP_CTL_GET_FREE"));
    std::string dev = "/dev/loop" + std::to_string(n);
    bool busy = false;
    UndoStep undo{"loop", dev, backing, std::to_string(st.st_ino)};
    auto change = ScopedChange::Make(journal, undo, [&]() -> Status {
      auto fd = OpenFile(dev, O_RDWR | O_NOFOLLOW);
      if (!fd) return std::unexpected(fd.error());
      loop_config cfg{};
      cfg.fd = static_cast<uint32_t>(backing_fd);  // the file made, never reopened by name
      cfg.info.lo_flags = LO_FLAGS_AUTOCLEAR | LO_FLAGS_DIRECT_IO;
      std::strncpy(reinterpret_cast<char*>(cfg.info.lo_file_name), backing.c_str(),
                   LO_NAME_SIZE - 1);
      loop_direct_io_ = true;
      int rc = ioctl(fd->get(), LOOP_CONFIGURE, &cfg);
      if (rc != 0 && errno == EINVAL) {  // the backing file system refuses direct I/O
        cfg.info.lo_flags = LO_FLAGS_AUTOCLEAR;
        loop_direct_io_ = false;
        rc = ioctl(fd->get(), LOOP_CONFIGURE, &cfg);
      }
      if (rc != 0) {
        busy = errno == EBUSY;
        return std::unexpected(ErrnoError(errno, "LOOP_CONFIGURE " + dev));
      }
      loop_fd_ = std::move(*fd);
      return {};
    });
    if (!change && busy) continue;  // another process took it first
    if (!change) return std::unexpected(change.error());
    changes_.push_back(std::move(*change));
    device_ = "loop" + std::to_string(n);
    loop_direct_io_ = ReadLine("/sys/block/" + device_ + "/loop/dio").value_or("0") == "1";
    return {};
  }
  return std::unexpected(ErrnoError(EBUSY, "attach a loop device"));
}

// dirty=SIZE: the loop device's bdi limits, restored (by the journal, with
// the device's inode as check) before the file system is unmounted.
Status Testbed::LimitDirty(uint64_t bytes, UndoJournal& journal) {
  if (bytes == 0) return {};
  return LimitDeviceDirty(device_, bytes, journal, changes_);
}

Status Testbed::Mount(const std::string& source, const std::string& data, UndoJournal& journal) {
  const std::string name = UniqueName("mnt");
  mount_point_ = journal.dir() + "/" + name;
  auto dir = ScopedChange::Make(journal, {"dir", mount_point_, "", ""}, [&]() -> Status {
    if (mkdirat(journal.dir_fd(), name.c_str(), 0700) != 0)
      return std::unexpected(ErrnoError(errno, "mkdir " + mount_point_));
    return {};
  });
  if (!dir) return std::unexpected(dir.error());
  changes_.push_back(std::move(*dir));
  auto mounted = ScopedChange::Make(journal, {"mount", mount_point_, "", source}, [&] {
    return MountWithLibmount(source, mount_point_, spec_.fs, data);
  });
  if (!mounted) return std::unexpected(mounted.error());
  changes_.push_back(std::move(*mounted));
  return {};
}

Result<std::unique_ptr<Testbed>> Testbed::Provision(const TestbedSpec& spec,
                                                    const TestbedOptions& options,
                                                    UndoJournal& journal) {
  if (geteuid() != 0) return std::unexpected(PlainError("test beds need root"));
  std::unique_ptr<Testbed> tb(new Testbed());
  tb->spec_ = spec;
  std::string opts = Join(spec.mount_options, ',');
  if (spec.fs == "tmpfs") {
    std::string data = "size=" + std::to_string(options.size) + (opts.empty() ? "" : "," + opts);
    if (Status s = tb->Mount("tmpfs", data, journal); !s) return std::unexpected(s.error());
    return tb;
  }
  auto scratch = AbsolutePath(options.scratch_dir);
  if (!scratch) return std::unexpected(scratch.error());
  auto dir = OpenTrustedDir(*scratch, DirUse::kPrivate, true);
  if (!dir) return std::unexpected(PlainError("--scratch: " + dir.error().Message()));
  std::string name = UniqueName("testbed") + ".img";
  // Absolute and without links: the loop's backing_file in sysfs reads so,
  // and undo compares the two.
  std::string backing = *scratch + "/" + name;
  UniqueFd image;
  auto file = ScopedChange::Make(journal, {"file", backing, "", ""}, [&]() -> Status {
    auto fd = CreateImage(dir->get(), name, backing);
    if (!fd) return std::unexpected(fd.error());
    image = std::move(*fd);
    if (ftruncate(image.get(), static_cast<off_t>(options.size)) != 0)
      return std::unexpected(ErrnoError(errno, "ftruncate " + backing));
    // A raw bed is written directly: fill it, so the first run (the first
    // scheduler) does not pay for the backing file's block allocation alone.
    return spec.fs == "raw" ? FillWithZeros(image.get(), options.size, backing, options.interrupted)
                            : Status{};
  });
  if (!file) return std::unexpected(file.error());
  tb->changes_.push_back(std::move(*file));
  if (Status s = tb->AttachLoop(backing, image.get(), journal); !s)
    return std::unexpected(s.error());
  std::string dev = "/dev/" + tb->device_;
  if (spec.fs == "raw") {  // the bare device is the target
    tb->mount_point_ = dev;
    return tb;
  }
  if (Status s = RunTool(MkfsCommand(spec, dev)); !s) return std::unexpected(s.error());
  if (Status s = tb->Mount(dev, opts, journal); !s) return std::unexpected(s.error());
  // After the mount: undone before it, while the device is still bound.
  if (Status s = tb->LimitDirty(spec.dirty_max, journal); !s) return std::unexpected(s.error());
  return tb;
}

Testbed::~Testbed() {
  while (!changes_.empty()) {
    if (changes_.back().step().op == "loop") loop_fd_.Reset();  // let the detach complete
    changes_.pop_back();                                        // ~ScopedChange undoes
  }
}

}  // namespace writelab
