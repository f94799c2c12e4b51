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
// PR_SET_PDEATHSIG, so a killed writelab does not leave them running. Files
// the loads write are created by writelab and removed by Stop().
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <string>

#include "writelab/error.h"

namespace writelab {

enum class BackgroundKind { kNone, kRandom, kStream, kCommand };

struct BackgroundSpec {
  BackgroundKind kind = BackgroundKind::kNone;
  std::string dir;              // where random/stream create their file
  uint64_t span = 256u << 20;   // random: file size
  uint64_t bound = 8ull << 30;  // stream: wrap point
  std::string command;          // cmd
};

class BackgroundLoad {
 public:
  // Forks the load. Call while the process has no other threads (fork in a
  // threaded process is only safe up to exec).
  static std::expected<std::unique_ptr<BackgroundLoad>, Error> Start(const BackgroundSpec& spec);
  ~BackgroundLoad();  // Stop() if still running

  // Bytes the load has written so far (random/stream; nullopt for cmd, whose
  // writes writelab cannot see).
  std::optional<uint64_t> bytes_written() const;
  // The same count as an atomic for a sampler to read; null for cmd.
  const std::atomic<uint64_t>* counter() const { return counts_bytes_ ? shared_bytes_ : nullptr; }
  // If the load has exited on its own: "exited with status 3" or "killed by
  // signal 9"; nullopt while it runs. Reaps it.
  std::optional<std::string> Exited();
  // Kills the process group, reaps, removes the load's file. Idempotent.
  void Stop();
  pid_t pid() const { return pid_; }
  const std::string& path() const { return path_; }

 private:
  BackgroundLoad() = default;
  pid_t pid_ = -1;
  bool reaped_ = false;
  std::string exit_reason_;
  std::string path_;
  std::atomic<uint64_t>* shared_bytes_ = nullptr;  // MAP_SHARED page, written by the child
  bool counts_bytes_ = false;
};

const char* BackgroundName(BackgroundKind k);

}  // namespace writelab
