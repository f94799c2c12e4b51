// SPDX-License-Identifier: MIT
// Background loads for `writelab fsync`: separate processes, as in the 2009
// fsync-tester runs, started before a measurement and killed and reaped
// after it.
//
//   random  4 KiB pwrites at random 4 KiB-aligned offsets of a --bg-span
//           file, never synced (Chris Mason's random writer)
//   stream  sequential buffered 1 MiB writes, never synced, wrapping to
//           offset 0 at --bg-size so it never fills the disk (the "dd")
//   cmd     any user command, run by /bin/sh -c in a process group of its own
//
// Each load runs in its own process group; Stop() sends SIGTERM to the group,
// then SIGKILL after a grace period, and reaps the leader. Children also get
// PR_SET_PDEATHSIG, so a killed writelab does not leave them running; the
// group is journaled (as root) before the load starts, so `writelab cleanup`
// also ends what a command's own children left after a kill -9. Files the
// loads write are created by writelab and removed by Stop().
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "testbed/scoped_change.h"
#include "writelab/error.h"

namespace writelab {

enum class BackgroundKind { kNone, kRandom, kStream, kCommand };

// How the stream load writes (the stream experiment's strategies, for
// fsync's bg= mitigations): plain pwrite, pwritev2 RWF_DONTCACHE, or plain
// pwrite with an 8 MiB sync_file_range window whose pages it drops.
enum class StreamStyle { kPlain, kDontcache, kWindowDrop };
const char* StreamStyleName(StreamStyle s);

struct BackgroundSpec {
  BackgroundKind kind = BackgroundKind::kNone;
  std::string dir;                          // where random/stream create their file
  uint64_t span = 256u << 20;               // random: file size
  uint64_t bound = 8ull << 30;              // stream: wrap point
  std::string command;                      // cmd
  StreamStyle style = StreamStyle::kPlain;  // stream
};

// What a load's process shares with writelab (a MAP_SHARED page).
struct BackgroundShared {
  std::atomic<uint64_t> bytes{0};   // written so far (random, stream)
  std::atomic<int> error{0};        // errno of the call that ended the load
  std::atomic<uint64_t> offset{0};  // where that call wrote
  const char* call = "";            // which call: a string literal
};

class BackgroundLoad {
 public:
  // Forks the load. Call while the process has no other threads (fork in a
  // threaded process is only safe up to exec). With a journal, the load's
  // process group is recorded before the load runs. place, if given, is
  // called with the load's pid before it runs (fsync's cgroup=: into a
  // cgroup, which its children then inherit); its error stops the load.
  static Result<std::unique_ptr<BackgroundLoad>> Start(
      const BackgroundSpec& spec, UndoJournal* journal,
      const std::function<Status(pid_t)>& place = {});
  ~BackgroundLoad();  // Stop() if still running

  // Bytes the load has written so far (random/stream; nullopt for cmd, whose
  // writes writelab cannot see).
  std::optional<uint64_t> bytes_written() const;
  // The same count as an atomic for a sampler to read; null for cmd.
  const std::atomic<uint64_t>* counter() const { return counts_bytes_ ? &shared_->bytes : nullptr; }
  // If the load has exited on its own: "exited with status 3: pwrite at
  // 4096: No space left on device (ENOSPC)" or "killed by signal 9";
  // nullopt while it runs. Does not reap it: Stop() does, after ending its
  // group.
  std::optional<std::string> Exited();
  // Kills the process group, reaps, removes the load's file. Idempotent.
  void Stop();
  pid_t pid() const { return pid_; }
  const std::string& path() const { return path_; }

 private:
  BackgroundLoad() = default;
  pid_t pid_ = -1;
  bool exited_ = false;  // the leader has exited (a zombie until reaped)
  bool reaped_ = false;
  std::string exit_reason_;
  std::string path_;
  BackgroundShared* shared_ = nullptr;  // MAP_SHARED page, written by the child
  bool counts_bytes_ = false;
  std::optional<ScopedChange> journaled_;  // the process group, for cleanup
};

const char* BackgroundName(BackgroundKind k);

}  // namespace writelab
