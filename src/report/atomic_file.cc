#include "report/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "io/file.h"

namespace writelab {

Status WriteFileAtomically(const std::string& path, const std::string& contents) {
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  auto fd = OpenFile(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (!fd) return std::unexpected(fd.error());
  auto fail = [&](const char* what) {
    int err = errno;
    unlink(tmp.c_str());
    return std::unexpected(ErrnoError(err, std::string(what) + " " + tmp));
  };
  const char* p = contents.data();
  size_t left = contents.size();
  while (left > 0) {
    ssize_t n = write(fd->get(), p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail("write");
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (fsync(fd->get()) != 0) return fail("fsync");
  fd->Reset();
  if (rename(tmp.c_str(), path.c_str()) != 0) return fail("rename to");
  return SyncParentDir(path);
}

}  // namespace writelab
