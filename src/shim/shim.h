// SPDX-License-Identifier: MIT
// libwritelab-run.so's insides (run_shim.cc says what it is for): its
// configuration, the state it keeps per descriptor, the real functions it
// wraps, and its records to writelab. Internal to src/shim.
#pragma once

#include <pthread.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "lib/paced_window.h"
#include "lib/writeback_window.h"
#include "shim/protocol.h"
#include "writelab/window.h"

namespace writelab::shim {

// The strategy is run's (shim/protocol.h); kPlain: writelab run --compare's
// plain runs (and --strategy plain): the writes as they are, only counted
// and reported. Without one (no WRITELAB_RUN) the shim is not Active().
struct Config {
  RunStrategy strategy = RunStrategy::kPlain;
  uint64_t window = kDefaultWindowBytes;
  uint64_t min_file = kDefaultWindowBytes;  // a stream shorter than this is left alone
  uint64_t pace_target_ns = 20'000'000;     // paced: other programs' fsync under this
  char glob[1024] = {};
  int report = -1;  // writelab's socket, or -1
  dev_t report_dev = 0;
  ino_t report_ino = 0;
};
extern Config g_config;
// A strategy is configured and the shim may act: set by the constructor,
// cleared for good when the process installs a seccomp filter (the shim's
// own system calls could then kill it; the supervisor takes over).
extern std::atomic<bool> g_active;
inline bool Active() { return g_active.load(std::memory_order_relaxed); }
// The shim's start, deferred to its first use (a regular file written): it
// checks that the process is not under seccomp (the shim's own calls could
// kill it), registers its fork handler and says hello. A process that
// writes no regular file makes no call of the shim's at all. Returns
// Active() after it.
bool Start();

// What is passed to the window at a time: a call per MiB, not per write.
inline constexpr uint64_t kBatch = 1u << 20;
// Descriptors are followed up to here, in chunks made on first use: a
// process that never writes a stream touches none (no page at start, none
// copied in a fork's child).
inline constexpr int kMaxFds = 1 << 16;
inline constexpr int kChunkFds = 64;

enum Kind : uint8_t { kUnknown = 0, kIgnored = 1, kTracked = 2 };

// direct: why a file's writes did not go direct (its done record's mech).
enum class DirectRefusal : uint8_t {
  kNone,
  kUnaligned,  // its first write after the claim was not aligned, or the kernel said EINVAL
  kOpen,       // no O_DIRECT descriptor of it could be opened (permissions, the file system)
  kAppend,     // opened O_APPEND: where a write lands is the kernel's to say
};

// A descriptor the shim follows: a regular file, not O_DIRECT (which leaves
// nothing cached), whose path matches the glob. A stream is a run of writes
// each beginning where the last ended; only a stream of at least min_file
// bytes is claimed and handled. All zeros is a valid unknown state (chunks
// come from mmap).
struct FdState {
  std::atomic<uint8_t> kind{kUnknown};
  pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
  dev_t dev = 0;
  ino_t ino = 0;
  bool claimed = false;       // this stream is the shim's
  bool ever_claimed = false;  // one of the descriptor's streams was
  // Its writes go out with RWF_DONTCACHE: written under the lock, read
  // without it by positional writes (FollowUnlocked).
  std::atomic<bool> dontcache{false};
  bool refused = false;  // the file system refused RWF_DONTCACHE
  bool failed = false;   // a window call failed: the rest as the program wrote it
  bool cached = false;   // under dontcache, bytes it could not write uncached
                         // (copy_file_range, stdio): those went through the window
  bool nowait = false;   // no descriptor of the shim's own could be opened to
                         // wait on: writeback started and dropped, never waited for
  uint64_t start = 0;    // where the stream began
  uint64_t next = 0;     // where its last write ended
  uint64_t pending = 0;  // from here to next: not yet given to the window
  uint64_t dropped = 0;  // drop-behind: advised up to here
  uint64_t written = 0;  // over the descriptor's life, all its streams
  // Bytes of positional writes made while another thread held the lock:
  // counted, not followed as a stream (see Relock).
  std::atomic<uint64_t> aside{0};
  uint64_t handled = 0;
  uint64_t unchecked = 0;  // bytes since dev and ino were last checked
  // Bytes given to fwrite since the position was last read: counted
  // without the lock (a race loses a count, never a byte of the file).
  std::atomic<uint64_t> stdio{0};
  WritebackWindow window{0, false};
  PacedWindow paced{0, 0};  // paced: its own flushes, a window behind the writer
  // paced, over the descriptor's streams: its flushes, those over half the
  // target at the smallest window, the slowest (the done record's).
  uint64_t paced_flushes = 0, paced_unmet = 0, paced_slowest_ns = 0;
  // direct: from the claim on, writes aligned as O_DIRECT needs go through
  // direct_fd, an O_DIRECT descriptor of the shim's own (the program's is
  // left as it is); the rest are the program's own and go through the
  // window, like dontcache's cached bytes. Set and read under the lock.
  bool direct = false;
  int direct_fd = -1;
  uint32_t dio_offset = 0;  // the file system's direct-I/O alignment (statx)
  uint32_t dio_mem = 0;
  DirectRefusal refusal = DirectRefusal::kNone;  // why none went direct
  uint64_t direct_bytes = 0;                     // written through direct_fd
};

// fd's state where one was made, else null (an unknown descriptor): no
// lock, no allocation, for the fast paths.
FdState* Peek(int fd);

// Above zero while this thread is inside the shim: a signal handler's
// write (or anything the shim itself calls) goes straight to the real call,
// and a handler's close, dup2 or exit leaves the shim's state alone rather
// than wait for a lock its own thread holds.
extern thread_local int t_inside __attribute__((tls_model("initial-exec")));
struct Inside {
  Inside() { ++t_inside; }
  ~Inside() { --t_inside; }
  Inside(const Inside&) = delete;
  Inside& operator=(const Inside&) = delete;
};

// The real functions (looked up on first use: a call may come before the
// constructor ran, from another library's constructor).
ssize_t RealWrite(int fd, const void* buf, size_t n);
ssize_t RealPwritev2(int fd, const iovec* iov, int count, off_t offset, int flags);
off_t RealLseek(int fd, off_t offset, int whence);
int RealClose(int fd);

// ---- stream.cc: the strategy on one descriptor ----------------------------

// fd's state, locked, when the shim follows it; else null (the caller then
// makes the real call). Classifies a descriptor on first use. Until Unlock
// the thread counts as inside the shim (t_inside).
FdState* Follow(int fd);
void Unlock(FdState* s);
// fd is a regular file, the one s follows (its device and inode).
bool SameFile(const FdState& s, int fd);
// For a positional write: fd's state when the shim follows it, NOT locked
// (a descriptor already followed costs no lock here; one seen for the first
// time is classified under its lock). Relock before counting the write.
FdState* FollowUnlocked(int fd);
// Locks a state FollowUnlocked returned, to count a positional write made
// without the lock: writers of one descriptor that are not a stream are
// never serialised by the shim. When another thread holds the lock, the
// bytes are counted aside (atomically) and the write is not followed as a
// stream: false then, as when the descriptor stopped being followed.
bool Relock(FdState* s, uint64_t bytes);
// Locks a state FollowUnlocked returned, waiting for the lock (a direct
// write must not have the shim's descriptor closed under it); false when
// the descriptor is no longer followed.
bool Lock(FdState* s);
// After n bytes were written at start: uncached (RWF_DONTCACHE, or direct)
// or cached.
void Wrote(FdState& s, int fd, uint64_t start, uint64_t n, bool uncached);
// What stdio wrote since the last look, by the kernel's position.
void CatchUpStdio(FdState& s, int fd);
// The end of fd's stream and of the shim's interest in it: the tail waited
// for and dropped, the done record sent, the state forgotten. Nothing when
// this thread is inside the shim (a signal handler's close): the state is
// then only marked unknown.
void Finish(int fd);
// The shim's interest in fd forgotten without a word (the descriptor is
// gone some way the shim did not see, or it is a fork's copy).
void Forget(int fd);
// A file of at least MIN_FILE, open for writing, that no wrapped call wrote:
// said as "unseen" (writelab's supervisor then handles it).
void ReportUnseen(int fd);
// In a fork's child: the parent's locks and streams are not the child's.
void ResetAfterFork();
// Finish on every descriptor the shim follows now (only the chunks made
// are looked at: a process that wrote nothing pays nothing at exit).
void FinishAll();
// Every stream ended, then the shim steps aside for good (a seccomp filter
// is about to be installed): later calls go straight to the real ones.
void StepAside(const char* reason);

// ---- direct.cc: the shim's own O_DIRECT descriptors ------------------------

// fd is no longer one of the shim's own descriptors (direct's): the
// program closed it or put another file at its number. Cheap when the shim
// holds none.
void Disown(int fd);
// direct, at the claim: the shim's own O_DIRECT descriptor of fd's file,
// with the file system's alignment, in s; false (s.refusal says why) when
// the file cannot be written so (O_APPEND, or no such descriptor).
bool OpenDirect(FdState& s, int fd);
// direct no more on s: the shim's descriptor closed (unless the program
// took its number), and the file's writes the program's own again.
void CloseDirect(FdState& s);
// direct: the write made through the shim's own O_DIRECT descriptor, at
// the program's position (moved past it after, as its write would have) or
// at offset, with s locked; *result and errno are the write's, *start where
// it began. False when the write is not one to make direct (not aligned,
// not where the stream goes on, flags, the descriptor lost) or the direct
// write failed: the caller then makes the program's own call, whose result
// the program gets. The first write after the claim that is not aligned
// refuses the file; a failed one leaves it as the program writes it.
bool WriteDirect(FdState& s, int fd, const iovec* iov, int count, off_t offset, int flags,
                 ssize_t* result, uint64_t* start);

// ---- report.cc: records to writelab (protocol.h) --------------------------

void ReportHello();
void ReportFile(const char* type, const FdState& s, int fd);  // claim, done, unseen
void ReportLeave(const char* reason);

}  // namespace writelab::shim
