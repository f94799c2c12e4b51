// SPDX-License-Identifier: MIT
#include "program/top/tally.h"

#include <algorithm>

#include "program/explain/rows.h"

namespace writelab {
namespace {

std::optional<double> P99Ms(const Histogram& h) {
  auto v = h.SupportedPercentile(99);
  if (!v) return std::nullopt;
  return static_cast<double>(*v) / 1e6;
}

}  // namespace

TopTally::TopTally(uint64_t start_ns, CommOf comm_of) : comm_of_(std::move(comm_of)) {
  now_.t0_ns = start_ns;
}

// The process's entry in m, named on first sight: by the name the kernel
// sent (a charge's comm), else by /proc. A process gone before /proc was
// read is "?" until a charge brings its name (a short-lived culprit, seen
// first as a victim): then every entry and pair that named it "?" is named.
TopProcess& TopTally::In(std::map<uint32_t, TopProcess>& m, uint32_t tgid,
                         const std::string& comm) {
  TopProcess& p = m[tgid];
  auto known = comms_.find(tgid);
  if (known == comms_.end()) {
    std::string name = comm.empty() ? comm_of_(tgid) : comm;
    known = comms_.emplace(tgid, name.empty() ? "?" : name).first;
  } else if (known->second == "?" && !comm.empty()) {
    known->second = comm;
    Rename(tgid, comm);
  }
  if (p.comm.empty()) p.comm = known->second;
  return p;
}

// tgid, named "?" until now, is comm in every entry and pair.
void TopTally::Rename(uint32_t tgid, const std::string& comm) {
  for (auto* m : {&now_.processes, &run_})
    if (auto e = m->find(tgid); e != m->end()) e->second.comm = comm;
  for (auto* m : {&now_.stalls, &run_stalls_})
    for (auto& [key, st] : *m)
      if (key.victim == tgid) st.victim_comm = comm;
}

void TopTally::AddCall(const TraceCall& c) {
  for (auto* m : {&now_.processes, &run_}) {
    TopProcess& p = In(*m, c.tgid, "");
    p.throttled_ms += static_cast<double>(c.part_ns[SPLIT_THROTTLE]) / 1e6;
    if (!TraceIsDurability(c.class_id)) continue;
    ++p.syncs;
    p.sync_ns += c.ns;
    for (int i = 0; i < SPLIT_PARTS; ++i) p.sync_part_ns[i] += c.part_ns[i];
    p.sync_max_ns = std::max<uint64_t>(p.sync_max_ns, c.ns);
  }
  if (TraceIsDurability(c.class_id)) {
    latency_now_[c.tgid].Record(c.ns);
    latency_run_[c.tgid].Record(c.ns);
  }
  arriving_.push_back(c);
}

void TopTally::AddCharges(ChargeWindow w) {
  if (w.kind != TRACE_CHARGE_COMMIT)
    for (const trace_charge& ch : w.charges) {
      if (ch.cause != TRACE_CAUSE_PROCESS) continue;
      for (auto* m : {&now_.processes, &run_}) {
        TopProcess& p = In(*m, ch.tgid, ch.comm);
        if (w.kind == TRACE_CHARGE_DIRTY) {
          p.dirtied += ch.bytes;
        } else {
          p.written += ch.bytes;
          if (ch.dev) p.written_cached += ch.bytes;
        }
      }
    }
  if (windows_.size() < kMaxKeptCalls)
    windows_.push_back(std::move(w));
  else
    ++windows_dropped_;
}

// A call's blocked time, charged: to its victim's and culprits' sums, and
// to the pairs of this interval and the run.
void TopTally::Charge(const TraceCall& c, const BlameIndex& index) {
  auto disk = disk_of_.find(c.dev);
  CallBlame b = index.Of(c, disk == disk_of_.end() ? 0 : disk->second);
  if (b.unattributed_ms > 0)
    b.shares.push_back({CulpritId{kCauseUncharged, 0}, "", b.unattributed_ms, 0});
  for (const CallBlame::Share& s : b.shares) {
    if (s.ms <= 0) continue;
    const bool self = IsProcessCause(s.who.cause) && s.who.tgid == c.tgid;
    for (auto* m : {&now_.processes, &run_}) {
      if (!self) In(*m, c.tgid, "").waited_ms += s.ms;
      if (!self && IsProcessCause(s.who.cause)) In(*m, s.who.tgid, s.comm).caused_ms += s.ms;
    }
    const TopStallKey key{c.tgid, s.who};
    for (auto* m : {&now_.stalls, &run_stalls_}) {
      TopStall& st = (*m)[key];
      if (st.victim_comm.empty()) st.victim_comm = In(run_, c.tgid, "").comm;
      if (st.culprit_comm.empty()) st.culprit_comm = s.comm;
      st.ms += s.ms;
      ++st.calls;
    }
  }
}

void TopTally::Prune(uint64_t now_ns) {
  if (now_ns < kWindowKeepNs) return;
  const uint64_t keep_from = now_ns - kWindowKeepNs;
  std::vector<const ChargeWindow*> gone;
  for (const ChargeWindow& w : windows_)
    if (w.t1 < keep_from) gone.push_back(&w);
  std::stable_sort(gone.begin(), gone.end(),
                   [](const ChargeWindow* a, const ChargeWindow* b) { return a->t1 < b->t1; });
  for (const ChargeWindow* w : gone) AddHeld(*w, held_before_);
  for (auto& [fs, held] : held_before_)  // those who hold nothing: a long run's exited writers
    std::erase_if(held, [](const auto& h) { return h.second.first == 0; });
  std::erase_if(windows_, [&](const ChargeWindow& w) { return w.t1 < keep_from; });
}

std::map<uint32_t, TopProcess> TopTally::Run() const {
  std::map<uint32_t, TopProcess> out = run_;
  for (const auto& [tgid, h] : latency_run_) out[tgid].sync_p99_ms = P99Ms(h);
  return out;
}

TopInterval TopTally::Close(uint64_t now_ns, bool final) {
  if (final) {
    pending_.insert(pending_.end(), arriving_.begin(), arriving_.end());
    arriving_.clear();
  }
  if (!pending_.empty()) {
    const BlameIndex index(windows_, &held_before_);
    for (const TraceCall& c : pending_) Charge(c, index);
  }
  pending_ = std::move(arriving_);
  arriving_.clear();
  Prune(now_ns);
  now_.t1_ns = now_ns;
  for (const auto& [tgid, h] : latency_now_) now_.processes[tgid].sync_p99_ms = P99Ms(h);
  latency_now_.clear();
  TopInterval done = std::move(now_);
  now_ = TopInterval{};
  now_.t0_ns = now_ns;
  intervals_.push_back(done);
  return done;
}

}  // namespace writelab
