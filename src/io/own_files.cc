// SPDX-License-Identifier: MIT
#include "io/own_files.h"

#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <mutex>

namespace writelab {
namespace {

// A slot's state: kFree -> kFilling (a thread copies the path in) -> kHeld.
// Whoever removes the file claims the slot first (kHeld -> kClaimed): the
// owner (RemoveOwnFile, KeepOwnFile), which then frees it, or the signal
// handler, which unlinks and leaves it kUnlinked for the owner to free. So
// a file is unlinked once, and a slot is reused only once its owner is done.
enum : int { kFree, kFilling, kHeld, kClaimed, kUnlinked };

struct Slot {
  std::atomic<int> state{kFree};
  int journal_id = 0;  // the owner's only: the handler never reads it
  char path[PATH_MAX];
};

Slot g_slots[kMaxOwnFiles];  // the signal handler's view: no allocation there
std::atomic<bool> g_on_signal{false};
std::mutex g_journal_mu;  // the journal is written from the owners' threads
OwnFileJournal g_journal;

Slot* Find(const std::string& path) {
  for (Slot& s : g_slots) {
    int st = s.state.load(std::memory_order_acquire);
    if ((st == kHeld || st == kClaimed || st == kUnlinked) && path == s.path) return &s;
  }
  return nullptr;
}

// Claims s for its owner: true when the owner is to unlink the file; false
// when the handler did. Waits out a handler that is unlinking it on another
// thread (on this one it has finished before we run again).
bool Claim(Slot& s) {
  for (;;) {
    int expected = kHeld;
    if (s.state.compare_exchange_strong(expected, kClaimed, std::memory_order_acq_rel)) return true;
    if (expected == kUnlinked) return false;
  }
}

void Forget(Slot& s) {
  if (s.journal_id) {
    std::lock_guard<std::mutex> lock(g_journal_mu);
    if (g_journal.done) g_journal.done(s.journal_id);
  }
  s.journal_id = 0;
  s.state.store(kFree, std::memory_order_release);
}

}  // namespace

void RegisterOwnFile(const std::string& path, int fd) {
  if (path.size() >= PATH_MAX) return;
  for (Slot& s : g_slots) {
    int expected = kFree;
    if (!s.state.compare_exchange_strong(expected, kFilling, std::memory_order_acq_rel)) continue;
    std::memcpy(s.path, path.c_str(), path.size() + 1);
    // The handler may remove it from here on, also while it is journaled
    // (an fdatasync): journal_id is the owner's alone.
    s.state.store(kHeld, std::memory_order_release);
    struct stat st;
    std::lock_guard<std::mutex> lock(g_journal_mu);
    s.journal_id = g_journal.record && fstat(fd, &st) == 0
                       ? g_journal.record(path, static_cast<uint64_t>(st.st_dev),
                                          static_cast<uint64_t>(st.st_ino))
                       : 0;
    return;
  }
}

void RemoveOwnFile(const std::string& path) {
  Slot* s = Find(path);
  if (!s) {
    unlink(path.c_str());
    return;
  }
  if (Claim(*s)) unlink(s->path);
  Forget(*s);
}

void KeepOwnFile(const std::string& path) {
  if (Slot* s = Find(path)) {
    Claim(*s);
    Forget(*s);
  }
}

void SetOwnFileJournal(OwnFileJournal journal) {
  std::lock_guard<std::mutex> lock(g_journal_mu);
  g_journal = std::move(journal);
}

void RemoveOwnFilesNow() {
  if (!g_on_signal.load(std::memory_order_relaxed)) return;
  for (Slot& s : g_slots) {
    int expected = kHeld;
    if (s.state.compare_exchange_strong(expected, kClaimed, std::memory_order_acq_rel)) {
      unlink(s.path);  // async-signal-safe
      s.state.store(kUnlinked, std::memory_order_release);
    }
  }
}

void RemoveOwnFilesOnSignal(bool enable) { g_on_signal.store(enable, std::memory_order_relaxed); }

}  // namespace writelab
