// SPDX-License-Identifier: MIT
// What libwritelab-run.so (the shim `writelab run` preloads into CMD) and
// writelab say to each other. Shared by both sides; the shim includes
// nothing else of writelab's but the window (src/lib/writeback_window.h).
//
// writelab -> shim, in CMD's environment:
//   WRITELAB_RUN=STRATEGY,WINDOW,MIN_FILE   e.g. "window-drop,8388608,8388608"
//   WRITELAB_RUN_FD=N:DEV:INO               writelab's socket (SOCK_SEQPACKET), and
//                                           the device and inode it must have
//   WRITELAB_RUN_PATH=GLOB                  only files whose path matches (fnmatch)
// shim -> writelab, one line per record, each sent as one message of at
// most kMaxRecord bytes (MSG_NOSIGNAL | MSG_DONTWAIT):
//   WLRUN1 hello pid=P exe=PATH
//   WLRUN1 claim pid=P dev=D ino=I path=PATH
//   WLRUN1 done pid=P dev=D ino=I written=B handled=H mech=M path=PATH
//        under paced, a file the shim claimed adds (before path)
//        flushes=F unmet=U slowest=NS: its own flushes, those that took
//        over half the target at the smallest window, the slowest in ns
//   WLRUN1 unseen pid=P dev=D ino=I path=PATH   (closed, MIN_FILE or more,
//        open for writing, but written by no call the shim wraps: io_uring,
//        mmap, a raw system call; the supervisor's)
//   WLRUN1 leave pid=P reason=seccomp          (the process is installing a
//        seccomp filter: the shim ended its streams and stepped aside; its
//        later files are the supervisor's. A process that starts under one
//        says nothing at all, not even hello)
//   WLRUN1 handover pid=P dev=D ino=I path=PATH (after leave: a regular file
//        the process has open for writing, the supervisor's from now on)
// D is st_dev as stat(2) gives it; PATH is percent-encoded (every byte
// outside [A-Za-z0-9/._~+-] as %XX), so that a record is one line of
// printable ASCII. M: how the bytes were handled: window, window-drop,
// dontcache, drop-behind, dontcache+window-drop (under dontcache, bytes that
// could not be written uncached, copy_file_range's or stdio's, went through
// the window-drop window), refused-dontcache (the file system refused
// RWF_DONTCACHE: plain writes), small (the file stayed below MIN_FILE),
// plain (STRATEGY plain: --compare's plain runs, counted, nothing done),
// failed (a sync_file_range or fadvise call failed: from then on the file
// was left as the program wrote it; handled says how far it got), no-wait
// (the shim could not open a read-only descriptor of its own to wait on, a
// file the program may write but not read: writeback was started and what
// was clean dropped, never waited for on the program's descriptor),
// direct (the stream's writes after the claim went through the shim's own
// O_DIRECT descriptor), direct+window-drop (some were not aligned: those
// were the program's own writes, through the window-drop window),
// refused-direct-unaligned (the first write after the claim was not
// aligned for O_DIRECT, or the kernel refused it: as the program wrote it),
// refused-direct-open (no O_DIRECT descriptor of the file could be opened),
// refused-direct-append (the program opened it O_APPEND).
#pragma once

#include <cstddef>
#include <cstdint>

namespace writelab {

// `writelab run`'s strategies, in the order --help lists them: one table for
// the command (its option, --help, the rows) and the shim (which reads the
// name from WRITELAB_RUN). Plain data: the shim needs nothing but libc.
enum class RunStrategy : uint8_t {
  kPlain,
  kWindow,
  kWindowDrop,
  kDontcache,
  kDropBehind,
  kPaced,
  kDirect
};

struct RunStrategyInfo {
  RunStrategy id;
  const char* name;     // as typed: --strategy window-drop
  const char* summary;  // one line for --help
};

// The stream experiment's winners, as it measures them (plain: CMD as it
// is, for --compare).
inline constexpr RunStrategyInfo kRunStrategies[] = {
    {RunStrategy::kWindowDrop, "window-drop",
     "sync_file_range a window behind the writer, wait for it, then POSIX_FADV_DONTNEED it "
     "(overwrite.c with Garzik's drop; the stream experiment's window-drop)"},
    {RunStrategy::kDontcache, "dontcache",
     "the writes become pwritev2 RWF_DONTCACHE (Linux 6.14+): the kernel drops the pages once "
     "written back"},
    {RunStrategy::kWindow, "window",
     "sync_file_range a window behind the writer and wait for it; the pages stay cached"},
    {RunStrategy::kDropBehind, "drop-behind",
     "POSIX_FADV_DONTNEED a window behind the writer, without waiting (nocache at close, done "
     "as the file grows)"},
    {RunStrategy::kPaced, "paced",
     "fdatasync a window behind the writer through writelab's own descriptor, then "
     "POSIX_FADV_DONTNEED it, the window sized from those flushes to keep other programs' fsync "
     "under --target (the stream experiment's paced)"},
    {RunStrategy::kDirect, "direct",
     "the writes go through an O_DIRECT descriptor of writelab's own where offset, length and "
     "buffer are aligned as the file system needs (statx DIOALIGN); a file whose writes are not "
     "is refused, as CMD wrote it, and its row says why (an anchor: nothing cached, no "
     "writeback)"},
    {RunStrategy::kPlain, "plain",
     "CMD as it is, its files only counted (what --compare sets the strategy beside)"},
};

}  // namespace writelab

namespace writelab::run_protocol {

inline constexpr const char* kMagic = "WLRUN1";
inline constexpr const char* kConfigEnv = "WRITELAB_RUN";
inline constexpr const char* kFdEnv = "WRITELAB_RUN_FD";
inline constexpr const char* kPathEnv = "WRITELAB_RUN_PATH";
inline constexpr size_t kMaxRecord = 4000;  // below PIPE_BUF (4096)
// The descriptor the socket has in CMD: high, so that a program opening
// files does not get it (lower where the limit on descriptors is), and
// checked by device and inode before every record.
inline constexpr int kReportFd = 1000;

// Whether c is kept as it is in a record's path.
inline bool PathByteKept(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '/' ||
         c == '.' || c == '_' || c == '~' || c == '+' || c == '-';
}

}  // namespace writelab::run_protocol
