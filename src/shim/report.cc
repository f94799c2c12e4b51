// SPDX-License-Identifier: MIT
// The shim's records to writelab (protocol.h): one line each, sent as one
// message on writelab's SOCK_SEQPACKET socket with MSG_NOSIGNAL and
// MSG_DONTWAIT, so that the program never waits for writelab, never dies of
// SIGPIPE once writelab is gone, and never gets a byte into a file of its
// own (the descriptor must still be the socket writelab named, by device
// and inode).
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "shim/protocol.h"
#include "shim/shim.h"

namespace writelab::shim {
namespace {

namespace proto = run_protocol;

void Put(char* buf, size_t* n, const char* text) {
  while (*text && *n + 1 < proto::kMaxRecord) buf[(*n)++] = *text++;
}

void PutNumber(char* buf, size_t* n, uint64_t v) {
  char digits[24];
  int k = 0;
  do digits[k++] = static_cast<char>('0' + v % 10);
  while ((v /= 10) && k < 23);
  while (k && *n + 1 < proto::kMaxRecord) buf[(*n)++] = digits[--k];
}

void PutPath(char* buf, size_t* n, const char* path) {
  static const char kHex[] = "0123456789ABCDEF";
  for (; *path && *n + 4 < proto::kMaxRecord; ++path) {
    const auto c = static_cast<unsigned char>(*path);
    if (proto::PathByteKept(c)) {
      buf[(*n)++] = static_cast<char>(c);
    } else {
      buf[(*n)++] = '%';
      buf[(*n)++] = kHex[c >> 4];
      buf[(*n)++] = kHex[c & 15];
    }
  }
}

void Send(char* buf, size_t n) {
  if (g_config.report < 0) return;
  const int saved = errno;
  struct stat st;
  if (fstat(g_config.report, &st) != 0 || !S_ISSOCK(st.st_mode) ||
      st.st_dev != g_config.report_dev || st.st_ino != g_config.report_ino) {
    g_config.report = -1;
  } else {
    buf[n++] = '\n';
    if (send(g_config.report, buf, n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 && errno != EAGAIN)
      g_config.report = -1;  // writelab is gone
  }
  errno = saved;
}

// "/proc/self/fd/N" -> the path, or "" (into out, of size cap).
void FdPath(int fd, char* out, size_t cap) {
  char link[32] = "/proc/self/fd/";
  size_t n = strlen(link);
  PutNumber(link, &n, static_cast<uint64_t>(fd));
  link[n] = 0;
  const ssize_t len = readlink(link, out, cap - 1);
  out[len > 0 ? len : 0] = 0;
}

const char* Mechanism(const FdState& s) {
  switch (g_config.strategy) {
    case RunStrategy::kPlain:
      return "plain";
    default:
      break;
  }
  if (!s.ever_claimed) return "small";
  if (s.failed) return "failed";
  if (s.nowait) return "no-wait";
  if (g_config.strategy == RunStrategy::kDirect) switch (s.refusal) {
      case DirectRefusal::kUnaligned:
        return "refused-direct-unaligned";
      case DirectRefusal::kOpen:
        return "refused-direct-open";
      case DirectRefusal::kAppend:
        return "refused-direct-append";
      case DirectRefusal::kNone:
        return s.cached ? "direct+window-drop" : "direct";
    }
  if (s.refused) return "refused-dontcache";
  if (s.cached) return "dontcache+window-drop";
  switch (g_config.strategy) {
    case RunStrategy::kWindow:
      return "window";
    case RunStrategy::kWindowDrop:
      return "window-drop";
    case RunStrategy::kDontcache:
      return "dontcache";
    case RunStrategy::kPaced:
      return "paced";
    default:
      return "drop-behind";
  }
}

}  // namespace

void ReportHello() {
  char buf[proto::kMaxRecord + 1];
  size_t n = 0;
  Put(buf, &n, proto::kMagic);
  Put(buf, &n, " hello pid=");
  PutNumber(buf, &n, static_cast<uint64_t>(getpid()));
  char exe[2048];
  const ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  exe[len > 0 ? len : 0] = 0;
  Put(buf, &n, " exe=");
  PutPath(buf, &n, exe);
  Send(buf, n);
}

void ReportLeave(const char* reason) {
  char buf[proto::kMaxRecord + 1];
  size_t n = 0;
  Put(buf, &n, proto::kMagic);
  Put(buf, &n, " leave pid=");
  PutNumber(buf, &n, static_cast<uint64_t>(getpid()));
  Put(buf, &n, " reason=");
  Put(buf, &n, reason);
  Send(buf, n);
}

void ReportFile(const char* type, const FdState& s, int fd) {
  char buf[proto::kMaxRecord + 1];
  size_t n = 0;
  Put(buf, &n, proto::kMagic);
  Put(buf, &n, " ");
  Put(buf, &n, type);
  Put(buf, &n, " pid=");
  PutNumber(buf, &n, static_cast<uint64_t>(getpid()));
  Put(buf, &n, " dev=");
  PutNumber(buf, &n, s.dev);
  Put(buf, &n, " ino=");
  PutNumber(buf, &n, s.ino);
  if (strcmp(type, "done") == 0) {
    Put(buf, &n, " written=");
    PutNumber(buf, &n, s.written + s.aside.load(std::memory_order_relaxed));
    Put(buf, &n, " handled=");
    PutNumber(buf, &n, s.handled);
    Put(buf, &n, " mech=");
    Put(buf, &n, Mechanism(s));
    // Under no-wait nothing was flushed (no descriptor of its own to flush).
    if (g_config.strategy == RunStrategy::kPaced && s.ever_claimed && !s.nowait) {
      Put(buf, &n, " flushes=");
      PutNumber(buf, &n, s.paced_flushes);
      Put(buf, &n, " unmet=");
      PutNumber(buf, &n, s.paced_unmet);
      Put(buf, &n, " slowest=");
      PutNumber(buf, &n, s.paced_slowest_ns);
    }
  }
  char path[2048];
  FdPath(fd, path, sizeof path);
  Put(buf, &n, " path=");
  PutPath(buf, &n, path);
  Send(buf, n);
}

}  // namespace writelab::shim
