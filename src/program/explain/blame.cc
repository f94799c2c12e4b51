// SPDX-License-Identifier: MIT
#include "program/explain/blame.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "core/units.h"

namespace writelab {
namespace {

double BlameMs(uint64_t ns) { return static_cast<double>(ns) / 1e6; }

uint64_t CallEndNs(const TraceCall& c) { return c.start_ns + c.ns; }

// Bytes and name per culprit (BlameIndex::Bytes).
using CulpritBytes = std::map<CulpritId, std::pair<uint64_t, std::string>>;

// The windows of list ending at or after t, in order.
auto FirstEndingFrom(const std::vector<const ChargeWindow*>& list, uint64_t t) {
  return std::lower_bound(list.begin(), list.end(), t,
                          [](const ChargeWindow* w, uint64_t v) { return w->t1 < v; });
}

// All a window's charges: what was queued in it.
uint64_t QueuedBytes(const ChargeWindow& w) {
  uint64_t sum = w.rest_bytes;
  for (const trace_charge& ch : w.charges) sum += ch.bytes;
  return sum;
}

// Adds a window's charges, each by weight (the share of it that counts).
// only_fs: only the pages of that file system's files written back for a
// process (0: everything).
void AddWindow(const ChargeWindow& w, double weight, CulpritBytes& into, uint32_t only_fs = 0) {
  for (const trace_charge& ch : w.charges) {
    if (only_fs && (ch.dev != only_fs || ch.cause != TRACE_CAUSE_PROCESS)) continue;
    auto& [bytes, comm] = into[CulpritId{ch.cause, ch.tgid}];
    bytes += static_cast<uint64_t>(static_cast<double>(ch.bytes) * weight + 0.5);
    if (comm.empty()) comm = ch.comm;
  }
  if (w.rest_bytes && !only_fs)
    into[CulpritId{kCauseUnnamed, 0}].first +=
        static_cast<uint64_t>(static_cast<double>(w.rest_bytes) * weight + 0.5);
}

// The windows of list that overlap [from, to], each weighted by the share
// of it inside (one list's windows follow one another).
void AddOverlapping(const std::vector<const ChargeWindow*>& list, uint64_t from, uint64_t to,
                    CulpritBytes& into) {
  for (auto w = FirstEndingFrom(list, from); w != list.end(); ++w) {
    const ChargeWindow& x = **w;
    if (x.t0 > to) break;
    const uint64_t lo = std::max<uint64_t>(x.t0, from), hi = std::min<uint64_t>(x.t1, to);
    const double weight =
        x.t1 > x.t0 ? static_cast<double>(hi > lo ? hi - lo : 0) / static_cast<double>(x.t1 - x.t0)
                    : 1.0;
    AddWindow(x, weight, into);
  }
}

// Whom the lock waits of holder h (SPLIT_LOCK_*) are charged to; cause
// TRACE_CAUSE_UNKNOWN: to no one.
CulpritId LockCulprit(const split_lock_holder& h) {
  switch (h.holder) {
    case SPLIT_LOCK_HELD:
      return {TRACE_CAUSE_LOCK, h.tgid};
    case SPLIT_LOCK_READERS:
      return {TRACE_CAUSE_LOCK_READERS, 0};
    case SPLIT_LOCK_FLUSHER:
      return {TRACE_CAUSE_LOCK_FLUSHER, h.tgid};
    default:
      return {TRACE_CAUSE_UNKNOWN, 0};
  }
}

// Whom a commit's wait for the handle of h is charged to.
CulpritId HandleCulprit(const split_lock_holder& h) {
  return {static_cast<uint16_t>(h.holder == SPLIT_LOCK_FLUSHER ? TRACE_CAUSE_HANDLE_FLUSHER
                                                               : TRACE_CAUSE_HANDLE),
          h.tgid};
}

// c's other sleep: its lock waits to the locks' holders, where they were
// seen, most time first, never more than its lock waits in all; the rest
// not charged, its lock waits apart.
void ChargeOther(const TraceCall& c, std::map<CulpritId, CallBlame::Share>& shares, CallBlame& b) {
  const uint64_t other = c.part_ns[SPLIT_OTHER];
  const uint64_t locks = std::min<uint64_t>(c.lock.wait_ns, other);
  std::vector<const split_lock_holder*> held;
  for (const split_lock_holder& h : c.lock.held)
    if (h.ns && LockCulprit(h).cause != TRACE_CAUSE_UNKNOWN) held.push_back(&h);
  std::stable_sort(held.begin(), held.end(),
                   [](const auto* x, const auto* y) { return x->ns > y->ns; });
  uint64_t charged = 0;
  for (const split_lock_holder* h : held) {
    const uint64_t ns = std::min<uint64_t>(h->ns, locks - charged);
    if (!ns) break;
    charged += ns;
    const CulpritId who = LockCulprit(*h);
    CallBlame::Share& s = shares[who];
    s.who = who;
    if (s.comm.empty()) s.comm.assign(h->comm, strnlen(h->comm, sizeof h->comm));
    s.ms += BlameMs(ns);
  }
  auto uncharged = [&](const char* why, uint64_t ns) {
    if (!ns) return;
    b.unattributed[why] += BlameMs(ns);
    b.unattributed_ms += BlameMs(ns);
  };
  uncharged("other sleep: lock waits with no holder named", locks - charged);
  uncharged("other sleep", other - locks);
}

}  // namespace

ChargeWindow ChargeWindow::From(const TraceCharges& e) {
  ChargeWindow w;
  w.kind = e.kind, w.dev = e.dev, w.flush = e.flush != 0;
  w.t0 = e.t0, w.t1 = e.t1, w.rest_bytes = e.rest_bytes, w.done_bytes = e.done_bytes;
  if (e.kind == TRACE_CHARGE_COMMIT) {
    w.locked_ns = e.locked_ns, w.unlocked_ns = e.unlocked_ns, w.handle = e.handle;
    w.handle.comm[sizeof w.handle.comm - 1] = 0;
  }
  for (uint32_t i = 0; i < e.n && i < TRACE_CHARGE_ENTRIES; ++i) {
    w.charges.push_back(e.e[i]);
    w.charges.back().comm[sizeof e.e[i].comm - 1] = 0;
  }
  return w;
}

void AddHeld(const ChargeWindow& w, HeldByFs& held, double weight) {
  if (w.kind == TRACE_CHARGE_COMMIT) return;  // its writes are its disk's windows' too
  for (const trace_charge& ch : w.charges) {
    if (ch.cause != TRACE_CAUSE_PROCESS) continue;
    const CulpritId who{ch.cause, ch.tgid};
    const auto part = static_cast<uint64_t>(static_cast<double>(ch.bytes) * weight + 0.5);
    if (w.kind == TRACE_CHARGE_DIRTY) {
      auto& [bytes, comm] = held[w.dev][who];
      bytes += part;
      if (comm.empty()) comm = ch.comm;
      continue;
    }
    if (!ch.dev) continue;  // direct I/O: no page of the cache
    const auto fs = held.find(ch.dev);
    if (fs == held.end()) continue;
    const auto it = fs->second.find(who);
    if (it == fs->second.end()) continue;
    uint64_t& bytes = it->second.first;
    bytes = bytes > part ? bytes - part : 0;
  }
}

BlameIndex::BlameIndex(const std::vector<ChargeWindow>& windows, const HeldByFs* base) {
  for (const ChargeWindow& w : windows)
    (w.kind == TRACE_CHARGE_COMMIT  ? commits_
     : w.kind == TRACE_CHARGE_DIRTY ? dirtied_
                                    : disks_)[w.dev]
        .push_back(&w);
  for (auto* m : {&disks_, &commits_, &dirtied_})
    for (auto& [dev, list] : *m)
      std::stable_sort(list.begin(), list.end(),
                       [](const ChargeWindow* a, const ChargeWindow* b) { return a->t1 < b->t1; });
  // A queue's length, window by window (never below empty: what was in
  // flight when tracing began completes with nothing queued for it).
  for (const auto& [dev, list] : disks_) {
    std::vector<uint64_t>& b = backlog_[dev];
    uint64_t now = 0;
    for (const ChargeWindow* w : list) {
      now += QueuedBytes(*w);
      now = now > w->done_bytes ? now - w->done_bytes : 0;
      b.push_back(now);
    }
  }
  IndexHeld(windows, base);
}

// What each culprit held, every kHeldEvery changes.
void BlameIndex::IndexHeld(const std::vector<ChargeWindow>& windows, const HeldByFs* base) {
  for (const ChargeWindow& w : windows)
    if (w.kind != TRACE_CHARGE_COMMIT) changes_.push_back(&w);
  std::stable_sort(changes_.begin(), changes_.end(),
                   [](const ChargeWindow* a, const ChargeWindow* b) { return a->t1 < b->t1; });
  HeldByFs held = base ? *base : HeldByFs{};
  for (size_t i = 0; i < changes_.size(); ++i) {
    if (i % kHeldEvery == 0) held_.push_back(held);
    AddHeld(*changes_[i], held);
  }
  if (held_.empty()) held_.push_back(held);
}

// The commits of c's file system that ran during c: what their journal
// thread wrote (others' ordered data, its own log blocks), and what else
// was on c's disk ahead of their writes (a flusher's writeback of a dd's
// pages ahead of the log's few blocks: the commit waits for the dd's
// bytes, not its own).
void BlameIndex::AddCommits(const TraceCall& c, uint32_t disk, Bytes& into) const {
  auto it = commits_.find(c.dev);
  if (it == commits_.end()) return;
  // One file system's commits follow one another.
  for (auto w = FirstEndingFrom(it->second, c.start_ns);
       w != it->second.end() && (*w)->t0 <= CallEndNs(c); ++w) {
    AddWindow(**w, 1.0, into);
    AddBeside(**w, disk, into);
  }
}

// What was ahead of commit's writes on disk: what was still queued there
// when it began to write (after its wait for open handles, which goes to
// their holders), and what was queued while it wrote, beyond its own
// writes (its journal thread's, which the disk's windows hold too), per
// culprit.
void BlameIndex::AddBeside(const ChargeWindow& commit, uint32_t disk, Bytes& into) const {
  const auto list = disks_.find(disk);
  if (list == disks_.end()) return;
  CulpritBytes ahead, own;
  const uint64_t from =
      commit.locked_ns ? std::clamp(commit.unlocked_ns, commit.t0, commit.t1) : commit.t0;
  AddBacklog(disk, from, ahead);
  AddOverlapping(list->second, from, commit.t1, ahead);
  AddWindow(commit, 1.0, own);
  for (const auto& [who, v] : ahead) {
    const uint64_t mine = own.count(who) ? own.at(who).first : 0;
    if (v.first <= mine) continue;
    auto& [bytes, comm] = into[who];
    bytes += v.first - mine;
    if (comm.empty()) comm = v.second;
  }
}

// What was still queued to disk at instant at (the queue's length as the
// last window before it ended), charged to the bytes queued last before
// it, as a queue served in order holds them.
void BlameIndex::AddBacklog(uint32_t disk, uint64_t at, Bytes& into, uint32_t only_fs) const {
  const auto& list = disks_.at(disk);
  const auto& backlog = backlog_.at(disk);
  size_t i = static_cast<size_t>(FirstEndingFrom(list, at + 1) - list.begin());
  if (i == 0) return;
  uint64_t left = backlog[--i];
  for (; left; --i) {
    const ChargeWindow& w = *list[i];
    if (const uint64_t queued = QueuedBytes(w)) {
      const uint64_t take = std::min(left, queued);
      AddWindow(w, static_cast<double>(take) / static_cast<double>(queued), into, only_fs);
      left -= take;
    }
    if (i == 0) break;
  }
}

// The cache flushes issued to c's disk during c: each made the device
// write what was queued to it since the flush before.
void BlameIndex::AddFlushes(const TraceCall& c, uint32_t disk, Bytes& into) const {
  auto it = disks_.find(disk);
  if (it == disks_.end()) return;
  const auto& list = it->second;
  for (auto w = FirstEndingFrom(list, c.start_ns); w != list.end() && (*w)->t1 <= CallEndNs(c);
       ++w) {
    if (!(*w)->flush) continue;
    for (auto back = w;; --back) {
      if (back != w && (*back)->flush) break;
      AddWindow(**back, 1.0, into);
      if (back == list.begin()) break;
    }
  }
}

// The writes c's own went behind on its disk: what was still queued there
// when c began, and what was queued while it ran.
void BlameIndex::AddQueue(const TraceCall& c, uint32_t disk, Bytes& into) const {
  auto it = disks_.find(disk);
  if (it == disks_.end()) return;
  AddBacklog(disk, c.start_ns, into);
  AddOverlapping(it->second, c.start_ns, CallEndNs(c), into);
}

// Who held dirty pages on c's file system when c began, or pages under
// writeback: what each had dirtied there by then (the dirty windows that
// ended before c began, and the share before it of the one that spans its
// start) less what was queued to be written back for it (the disks'
// windows that ended before it), and what of that was still queued. A
// call paused for dirty throttling waits until the pages held over the
// limit (dirty or under writeback) are written.
void BlameIndex::AddHolders(const TraceCall& c, Bytes& into) const {
  const size_t n =
      static_cast<size_t>(FirstEndingFrom(changes_, c.start_ns + 1) - changes_.begin());
  const size_t k = std::min(n / kHeldEvery, held_.size() - 1);
  HeldByFs held;
  if (const auto it = held_[k].find(c.dev); it != held_[k].end()) held.insert(*it);
  for (size_t i = k * kHeldEvery; i < n; ++i)
    if (changes_[i]->kind != TRACE_CHARGE_DIRTY || changes_[i]->dev == c.dev)
      AddHeld(*changes_[i], held);
  if (const auto it = dirtied_.find(c.dev); it != dirtied_.end())
    if (const auto w = FirstEndingFrom(it->second, c.start_ns + 1);
        w != it->second.end() && (*w)->t0 < c.start_ns)
      AddHeld(
          **w, held,
          static_cast<double>(c.start_ns - (*w)->t0) / static_cast<double>((*w)->t1 - (*w)->t0));
  for (const auto& [who, v] : held[c.dev])
    if (v.first) into[who] = v;
  // Pages under writeback are the throttle's too until their writes
  // complete: what was still queued of the file system's pages.
  for (const auto& [disk, list] : disks_) AddBacklog(disk, c.start_ns, into, c.dev);
}

// The commits of c's file system that waited for an open handle while c
// ran: the part of c inside each such wait (at most journal_ns in all: the
// split keeps how long c waited for the journal, not when) charged to the
// holder of the last handle to stop (the thread that woke the commit's),
// up to that stop and the commit thread's wake-up after it (at most
// kHandleStopSlackNs); a longer rest is left to the commit's bytes. A
// locked wait with no stop seen, longer than the slack, is said as not
// charged. Returns what it accounted for.
uint64_t BlameIndex::ChargeHandles(const TraceCall& c, uint64_t journal_ns,
                                   std::map<CulpritId, CallBlame::Share>& shares,
                                   CallBlame& b) const {
  auto it = commits_.find(c.dev);
  if (it == commits_.end() || !journal_ns) return 0;
  uint64_t done = 0;
  // The part of [from, to] inside c, within what is left of journal_ns.
  auto take = [&](uint64_t from, uint64_t to) -> uint64_t {
    const uint64_t lo = std::max<uint64_t>(from, c.start_ns), hi = std::min(to, CallEndNs(c));
    const uint64_t ns = hi > lo ? std::min<uint64_t>(hi - lo, journal_ns - done) : 0;
    done += ns;
    return ns;
  };
  for (auto w = FirstEndingFrom(it->second, c.start_ns);
       w != it->second.end() && (*w)->t0 <= CallEndNs(c) && done < journal_ns; ++w) {
    const ChargeWindow& x = **w;
    if (!x.locked_ns) continue;
    if (x.handle.holder == SPLIT_LOCK_UNSEEN) {
      if (x.unlocked_ns > x.locked_ns + kHandleStopSlackNs)
        if (const uint64_t ns = take(x.locked_ns, x.unlocked_ns)) {
          b.unattributed["journal commit locked with no handle seen to stop"] += BlameMs(ns);
          b.unattributed_ms += BlameMs(ns);
        }
      continue;
    }
    const uint64_t stop = x.locked_ns + x.handle.ns;
    const uint64_t until = std::max(stop, std::min(x.unlocked_ns, stop + kHandleStopSlackNs));
    if (const uint64_t ns = take(x.locked_ns, until)) {
      const CulpritId who = HandleCulprit(x.handle);
      CallBlame::Share& s = shares[who];
      s.who = who;
      if (s.comm.empty()) s.comm = x.handle.comm;
      s.ms += BlameMs(ns);
    }
  }
  return done;
}

CallBlame BlameIndex::Of(const TraceCall& c, uint32_t disk) const {
  CallBlame b;
  std::map<CulpritId, CallBlame::Share> shares;
  auto charge = [&](uint64_t ns, const Bytes& bytes, const char* none) {
    if (!ns) return;
    uint64_t total = 0;
    for (const auto& [who, v] : bytes) total += v.first;
    if (!total) {
      b.unattributed[none] += BlameMs(ns);
      b.unattributed_ms += BlameMs(ns);
      return;
    }
    for (const auto& [who, v] : bytes) {
      CallBlame::Share& s = shares[who];
      s.who = who;
      if (s.comm.empty()) s.comm = v.second;
      s.ms += BlameMs(ns) * static_cast<double>(v.first) / static_cast<double>(total);
      s.bytes += v.first;
    }
  };
  Bytes journal, flush, queue, held;
  AddCommits(c, disk, journal);
  AddFlushes(c, disk, flush);
  AddQueue(c, disk, queue);
  if (c.part_ns[SPLIT_THROTTLE]) AddHolders(c, held);
  const uint64_t journal_ns = c.part_ns[SPLIT_JOURNAL];
  charge(journal_ns - ChargeHandles(c, journal_ns, shares, b), journal,
         "journal commit, no commit's writes seen");
  charge(c.part_ns[SPLIT_FLUSH], flush, "cache flush, nothing written before it");
  charge(c.part_ns[SPLIT_WRITEBACK], queue, "its writes, nothing queued meanwhile");
  charge(c.part_ns[SPLIT_THROTTLE], held, "dirty throttling, no dirty page's holder seen");
  ChargeOther(c, shares, b);
  for (int p = SPLIT_JOURNAL; p <= SPLIT_OTHER; ++p) b.blocked_ms += BlameMs(c.part_ns[p]);
  for (auto& [who, s] : shares) b.shares.push_back(std::move(s));
  std::stable_sort(b.shares.begin(), b.shares.end(),
                   [](const auto& x, const auto& y) { return x.ms > y.ms; });
  return b;
}

std::string CulpritName(const CulpritId& who, const std::string& comm, uint32_t self_tgid) {
  const auto process = [&] {
    return who.tgid == self_tgid ? fmt::format("self (pid {})", who.tgid)
                                 : fmt::format("{} (pid {})", comm, who.tgid);
  };
  switch (who.cause) {
    case TRACE_CAUSE_PROCESS:
      return process();
    case TRACE_CAUSE_JOURNAL:
      return "the journal's own blocks";
    case TRACE_CAUSE_METADATA:
      return "file system metadata";
    case kCauseUnnamed:
      return "others (beyond the 16 named per window)";
    case TRACE_CAUSE_LOCK:
      return "a lock held by " + process();
    case TRACE_CAUSE_LOCK_READERS:
      return "a lock held by readers (not named)";
    case TRACE_CAUSE_LOCK_FLUSHER:
      return "a lock held by a flusher writing back pages of " + process();
    case TRACE_CAUSE_HANDLE:
      return "a journal handle held by " + process();
    case TRACE_CAUSE_HANDLE_FLUSHER:
      return "a journal handle held by a flusher writing back pages of " + process();
    default:
      return "pages dirtied before tracing, or a kernel thread's I/O";
  }
}

std::string BlameLine(const CallBlame& b, uint32_t self_tgid) {
  if (b.blocked_ms <= 0) return "who made it wait: it never slept";
  std::string out = "who made it wait:";
  for (const CallBlame::Share& s : b.shares) {
    if (s.ms < 0.005 * b.blocked_ms && &s != &b.shares.front()) continue;
    out += fmt::format(" {} {:.1f} ms", CulpritName(s.who, s.comm, self_tgid), s.ms);
    out += IsLockCause(s.who.cause)
               ? ","
               : fmt::format(" ({:.1f} MB),", static_cast<double>(s.bytes) / 1e6);
  }
  if (b.unattributed_ms > 0) {
    out += fmt::format(" not charged {:.1f} ms (", b.unattributed_ms);
    for (const auto& [why, ms] : b.unattributed) out += fmt::format("{} {:.1f}, ", why, ms);
    out.resize(out.size() - 2);
    out += "),";
  }
  out.pop_back();
  return out;
}

}  // namespace writelab
