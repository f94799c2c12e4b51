// SPDX-License-Identifier: MIT
// `writelab run`'s supervisor: the files CMD and its descendants write,
// seen from outside through /proc/PID/fd, and the strategy applied to those
// the shim does not handle (static binaries, io_uring, raw system calls,
// stdio between two fwrites). The page cache is per inode, so
// sync_file_range and POSIX_FADV_DONTNEED on writelab's own descriptor of
// the same file act on CMD's pages; what it cannot do is pace the writer,
// nor make its writes uncached (under dontcache it windows and drops, and
// says so). It also reads the shim's records (program/run/records.h).
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "io/file.h"
#include "lib/paced_window.h"
#include "lib/writeback_window.h"
#include "program/run/records.h"
#include "program/run/spec.h"
#include "program/spawn.h"

namespace writelab {

// A file the scope wrote, and what became of it.
struct WatchedFile {
  uint64_t dev = 0, ino = 0;  // st_dev, st_ino
  std::string path;           // as /proc or the shim named it
  std::string link;           // /proc/PID/fd/N where a process of the scope held it last
  // writelab's own (read-only), for the window and cachestat: opened only
  // once the file is one the strategy is for (at least --min-file), and
  // only as a regular file that is that device and inode.
  UniqueFd fd;
  bool opened = false;             // an open was tried (fd may still be empty: it failed)
  int open_error = 0;              // why the last open failed (EMFILE, EACCES, ENOENT...)
  bool released = false;           // its descriptor was closed while CMD ran (it may reopen)
  bool deleted = false;            // unlinked while CMD ran: its descriptor went with it
  bool seen = false;               // held open by a process of the scope at the last full look
  bool created = false;            // born during the run (statx btime): all its bytes are CMD's
  uint64_t first_size = 0;         // when first seen
  uint64_t size = 0;               // the latest seen
  uint64_t min_size = UINT64_MAX;  // the smallest seen (a truncation shows here)
  uint64_t first_blocks = 0;       // bytes allocated to it when first seen (st_blocks)
  uint64_t blocks = 0;             // the latest seen
  uint64_t base = 0;               // where CMD's bytes begin: 0 if it created it, else first_size
  std::vector<pid_t> writers;      // processes seen holding it open for writing (or reporting it)
  // The shim's account (claim and done records).
  bool shim_claimed = false;
  uint64_t shim_written = 0, shim_handled = 0;
  std::string shim_mech;
  ShimRecord::Paced shim_paced;  // paced: summed over its done records, the slowest kept
  bool shim_left = false;        // a process writing it stepped the shim aside (seccomp)
  // The supervisor's.
  int unclaimed_looks = 0;  // looks at or past --min-file without a claim
  bool supervised = false;
  uint64_t supervised_bytes = 0;  // up to where its window has been given the file
  WritebackWindow window{kDefaultWindowBytes, true};
  PacedWindow paced{20'000'000, kDefaultWindowBytes};  // paced, from outside
  std::string supervisor_error;                        // a window call that failed
};

// What CMD wrote to f, as the supervisor can tell without the shim: what
// it grew by, but no more than the space allocated to it grew by (a file
// ftruncate'd to 9 MiB and never written grew by nothing).
uint64_t GrowthOf(const WatchedFile& f);

class Supervisor {
 public:
  // root: CMD; report: writelab's end of the shim's socket (non-blocking),
  // or -1; born_since_ns: the coarse realtime clock before CMD started (a
  // file born since, by its birth time, is all CMD's); as: the user CMD runs
  // as (files the shim names by path are opened with that user's rights and
  // groups, never root's).
  Supervisor(const RunSpec& spec, pid_t root, int report, uint64_t born_since_ns, const RunAs& as);

  // One look: the shim's records, then the scope's open files; the window
  // given to those past --min-file the shim has not claimed. full: find
  // the scope's processes anew in all of /proc (a static child says no
  // hello); else look only at those already known (cheap, for fast looks).
  void Poll(bool full = true);
  // After CMD exited: the last records, and the tail of every supervised
  // file waited for (and dropped, but under window).
  void Finish();

  std::vector<WatchedFile>& files() { return files_; }
  // writelab's own descriptor of f (opened now if it was not yet), or -1.
  int FdOf(WatchedFile& f);
  // The processes of the scope seen, with their executable; those that said
  // hello carry the shim.
  const std::map<pid_t, std::string>& processes() const { return processes_; }
  const std::set<pid_t>& shimmed() const { return shimmed_; }
  // Processes whose shim stepped aside (a seccomp filter was installed),
  // with the reason.
  const std::map<pid_t, std::string>& left() const { return left_; }
  const std::vector<std::string>& record_errors() const { return record_errors_; }
  // What it had to leave out: records of processes outside the scope,
  // records beyond the error cap, files beyond the file cap, /proc it could
  // not read; a line each, for the run's notes.
  std::vector<std::string> Losses() const;

  // At most this many files are watched, and this many records of the shim
  // that it did not understand kept (docs/security.md: what one run keeps).
  static constexpr size_t kMaxFiles = 10000;
  static constexpr size_t kMaxRecordErrors = 10;

 private:
  void ReadRecords();
  // sender: the pid the kernel stamped on the record's message (0 where
  // it stamped none).
  void Take(const ShimRecord& r, pid_t sender);
  bool InScope(pid_t pid) const;
  void Scan(pid_t pid);
  WatchedFile* Find(uint64_t dev, uint64_t ino);
  WatchedFile* Add(uint64_t dev, uint64_t ino, const std::string& path);
  void Supervise(WatchedFile& f);
  // The end of a file the supervisor drove: its windows brought up to the
  // size last noted, then FinishSupervised; an error is the file's.
  void Conclude(WatchedFile& f);
  // Closes writelab's descriptor of f (a file nobody of the scope has open
  // any more, or one unlinked): its window finished first, unless deleted.
  void Release(WatchedFile& f, bool deleted);
  void ReleaseUnused(bool full);
  void Note(WatchedFile& f, const struct stat& st);

  const RunSpec& spec_;
  pid_t root_;
  int report_;
  uint64_t born_since_ns_;
  RunAs as_;
  ShimRecordReader reader_;
  std::vector<WatchedFile> files_;
  std::map<std::pair<uint64_t, uint64_t>, size_t> index_;
  std::map<pid_t, std::string> processes_;
  std::set<pid_t> shimmed_;
  std::set<pid_t> live_;  // the processes of the scope not yet seen gone
  std::map<pid_t, std::string> left_;
  std::vector<std::string> record_errors_;
  uint64_t errors_dropped_ = 0, out_of_scope_ = 0, files_dropped_ = 0, scan_errors_ = 0;
};

// The strategy's window over a file from outside: the bytes between what it
// was given and size, then the wait (and drop) a window behind; drop-behind
// advises from base (where CMD's bytes begin) to a window behind size;
// paced flushes (fdatasync on writelab's own descriptor) and drops each
// window once written, p sizing the next.
int SuperviseRange(RunStrategy s, uint64_t window, int fd, WritebackWindow& w, PacedWindow& p,
                   uint64_t base, uint64_t from, uint64_t size, const char** what);

// A regular file that is dev:ino, opened read-only without its driver's
// open ever running: first O_PATH (following the last component only with
// follow: /proc/PID/fd/N is a link to follow, a path from a record is not),
// checked, then reopened through /proc/self/fd. -1 otherwise.
int OpenRegularFile(const std::string& path, uint64_t dev, uint64_t ino, bool follow);

}  // namespace writelab
