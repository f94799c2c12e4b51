// SPDX-License-Identifier: MIT
#include "io/own_files.h"

#include <limits.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

namespace writelab {
namespace {

// A slot's state: kFree -> kFilling (a thread copies the path in) ->
// kHeld; the handler or RemoveOwnFile claims a held slot (kClaimed) before
// it unlinks, so a file is unlinked once.
enum : int { kFree, kFilling, kHeld, kClaimed, kUnlinked };

struct Slot {
  std::atomic<int> state{kFree};
  char path[PATH_MAX];
};

Slot g_slots[kMaxOwnFiles];  // the signal handler's view: no allocation there
std::atomic<bool> g_on_signal{false};

Slot* Find(const std::string& path) {
  for (Slot& s : g_slots) {
    int st = s.state.load(std::memory_order_acquire);
    if ((st == kHeld || st == kUnlinked) && path == s.path) return &s;
  }
  return nullptr;
}

}  // namespace

void RegisterOwnFile(const std::string& path) {
  if (path.size() >= PATH_MAX) return;
  for (Slot& s : g_slots) {
    int expected = kFree;
    if (!s.state.compare_exchange_strong(expected, kFilling, std::memory_order_acq_rel)) continue;
    std::memcpy(s.path, path.c_str(), path.size() + 1);
    s.state.store(kHeld, std::memory_order_release);
    return;
  }
}

void RemoveOwnFile(const std::string& path) {
  Slot* s = Find(path);
  if (!s) {
    unlink(path.c_str());
    return;
  }
  int expected = kHeld;
  if (s->state.compare_exchange_strong(expected, kClaimed, std::memory_order_acq_rel))
    unlink(s->path);
  // Claimed by us, or already unlinked by the handler: free the slot.
  s->state.store(kFree, std::memory_order_release);
}

void KeepOwnFile(const std::string& path) {
  if (Slot* s = Find(path)) {
    int expected = kHeld;
    if (s->state.compare_exchange_strong(expected, kClaimed, std::memory_order_acq_rel))
      s->state.store(kFree, std::memory_order_release);
  }
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
