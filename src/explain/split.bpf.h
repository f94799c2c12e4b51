// SPDX-License-Identifier: MIT
// The split of a timed call, shared by both BPF programs (explain.bpf.c for
// --explain, trace.bpf.c for `writelab explain -- CMD`): the parts of
// split_parts.h from the scheduler's events, and the overlaps from the
// requests in flight on the watched disks and the commits running on the
// watched file systems. Included after vmlinux.h, the libbpf helpers,
// block.bpf.h and split_parts.h; the including program calls
// SplitBegin/SplitEnd around a call and the Split* functions of the
// request and commit events it filters.
#pragma once

// ---- the overlaps: what the disks and journals are doing

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct split_state);
} split_state SEC(".maps");

static __always_inline struct split_state* SplitState(void) {
  __u32 zero = 0;
  return bpf_map_lookup_elem(&split_state, &zero);
}

static __always_inline __u32 DuringNow(struct split_state* s) {
  for (int i = 0; i < SPLIT_OVERLAPS; ++i)
    if (s->counts[i] > 0) return (__u32)i;
  return SPLIT_OVERLAPS;
}

// Brings the clock up to now under the overlap the state was in: each
// stretch of time goes to one overlap, once, however many CPUs try at once
// (the compare-and-swap on last_ns). A call's overlaps are the differences
// of cum between its start and its end: O(1) per event and per call.
static __always_inline void Advance(struct split_state* s, __u64 now) {
  const __u64 old = s->last_ns;
  if (now <= old) return;
  if (__sync_val_compare_and_swap(&s->last_ns, old, now) != old) return;
  const __u32 d = DuringNow(s);
  if (d <= SPLIT_OVERLAPS) __sync_fetch_and_add(&s->cum[d], now - old);
}

// The time under each overlap up to now, read without writing: the open
// stretch since last_ns counts for the overlap the state is in.
static __always_inline void SplitClock(struct split_state* s, __u64 now, __u64* out) {
  const __u64 last = s->last_ns;
  const __u32 d = DuringNow(s);
  for (int i = 0; i < SPLIT_OVERLAPS; ++i)
    out[i] = s->cum[i] + (i == d && now > last ? now - last : 0);
}

// The count of overlap which changes by delta at now: the time until now
// was the old state's.
static __always_inline void SplitChangeAt(struct split_state* s, __u32 which, int delta,
                                          __u64 now) {
  if (!s || which >= SPLIT_OVERLAPS) return;
  Advance(s, now);
  __sync_fetch_and_add(&s->counts[which], delta);
}

static __always_inline void SplitChange(__u32 which, int delta) {
  SplitChangeAt(SplitState(), which, delta, bpf_ktime_get_ns());
}

static __always_inline void SplitCount(__u64* field) {
  if (field) __sync_fetch_and_add(field, 1);
}

// ---- requests in flight, keyed by the request itself: its driver tag may
// already be released when it is requeued, so a tag does not outlive it.
// Issue adds a request once, however often it is issued; requeue,
// completion and a new insertion take it out if it is there; the sweep
// (SplitReap) takes out what those missed. Every count of split_state is
// the number of its requests in the map.

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, SPLIT_RQS);
  __type(key, __u64);  // the struct request
  __type(value, struct split_rq);
} split_rqs SEC(".maps");

// The sweep (SPLIT_RQ_SWEEP_NS): a request the kernel no longer has in
// flight leaves at once, counted in rq_found_ended (its completion or
// requeue ran none of the programs: docs/explain.md says when that was
// seen); one still in flight after SPLIT_RQ_LOST_NS is dropped
// as lost, counted in rq_lost. The key is the request's address: reading
// its state is a probe read, safe however the request was reused since.
static long SplitReap(struct bpf_map* map, __u64* key, struct split_rq* rq, __u64* now) {
  if (*now < rq->issue_ns + SPLIT_RQ_SETTLE_NS) return 0;
  const int lost = *now - rq->issue_ns >= SPLIT_RQ_LOST_NS;
  if (!lost && BPF_CORE_READ((struct request*)*key, state) == MQ_RQ_IN_FLIGHT) return 0;
  const __u32 during = rq->during;
  if (bpf_map_delete_elem(&split_rqs, key) == 0) {
    SplitChange(during, -1);
    struct split_state* s = SplitState();
    if (s) SplitCount(lost ? &s->check.rq_lost : &s->check.rq_found_ended);
  }
  return 0;
}

// A write or flush request of a watched disk issued to its driver.
static __always_inline void SplitRqIssue(struct request* rq, __u32 opf) {
  const __u32 during = IsFlush(opf) && !IsWrite(opf) ? SPLIT_DURING_FLUSH : SPLIT_DURING_WRITES;
  __u64 key = (__u64)rq;
  __u64 now = bpf_ktime_get_ns();
  struct split_state* s = SplitState();
  struct split_rq* old = bpf_map_lookup_elem(&split_rqs, &key);
  if (old) {  // issued again with no requeue or completion seen between
    if (s) SplitCount(&s->check.rq_reissued);
    if (old->during != during) {
      SplitChangeAt(s, old->during, -1, now);
      SplitChangeAt(s, during, 1, now);
      old->during = during;
    }
    old->issue_ns = now;
  } else {
    struct split_rq v = {now, during, 0};
    const long err = bpf_map_update_elem(&split_rqs, &key, &v, BPF_NOEXIST);
    if (err == 0)
      SplitChangeAt(s, during, 1, now);
    else if (err != -17 /* EEXIST: another CPU issued it at once */ && s)
      SplitCount(&s->check.rq_untracked);
  }
  if (!s) return;
  // Only this request in flight: nothing older to sweep (a syncing loop
  // that waits for each request seldom sweeps at all).
  if (s->counts[SPLIT_DURING_FLUSH] + s->counts[SPLIT_DURING_WRITES] <= 1) return;
  const __u64 last = s->last_reap_ns;
  if (now - last > SPLIT_RQ_SWEEP_NS &&
      __sync_val_compare_and_swap(&s->last_reap_ns, last, now) == last)
    bpf_for_each_map_elem(&split_rqs, SplitReap, &now, 0);
}

// A request leaves flight (completed or requeued): its issue time, or 0 when
// it was not in flight (issued before the programs were attached, or an
// empty flush the flush machinery completes without issuing it).
static __always_inline __u64 SplitRqDone(struct request* rq) {
  __u64 key = (__u64)rq;
  struct split_rq* in = bpf_map_lookup_elem(&split_rqs, &key);
  if (!in) return 0;
  const struct split_rq v = *in;
  if (bpf_map_delete_elem(&split_rqs, &key) != 0) return 0;  // another CPU took it
  SplitChange(v.during, -1);
  return v.issue_ns ? v.issue_ns : 1;
}

// A request the driver gave back (BLK_STS_RESOURCE...): issued again later.
// 1 when it was in flight.
static __always_inline int SplitRqRequeue(struct request* rq) {
  if (!SplitRqDone(rq)) return 0;
  struct split_state* s = SplitState();
  if (s) SplitCount(&s->check.rq_requeued);
  return 1;
}

// A request inserted into the queue is not in flight: one still counted
// missed its requeue or completion.
static __always_inline void SplitRqInsert(struct request* rq) {
  if (!SplitRqDone(rq)) return;
  struct split_state* s = SplitState();
  if (s) SplitCount(&s->check.rq_reinserted);
}

// ---- commits running, keyed by the file system (and its kind of commit)

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 128);
  __type(key, __u32);
  __type(value, struct split_commit);
} split_commits SEC(".maps");

static __always_inline void SplitCommitStart(__u32 key, __u64 journal_bytes0, __u64 tid) {
  struct split_commit v = {bpf_ktime_get_ns(), journal_bytes0, tid};
  struct split_commit* old = bpf_map_lookup_elem(&split_commits, &key);
  if (old) {  // its last commit's end was never seen: counted once
    struct split_state* s = SplitState();
    if (s) SplitCount(&s->check.commits_unended);
    *old = v;
    return;
  }
  if (bpf_map_update_elem(&split_commits, &key, &v, BPF_NOEXIST) == 0)
    SplitChange(SPLIT_DURING_COMMIT, 1);
}

// The commit of key ends: 1 and *out when it was running.
static __always_inline int SplitCommitEnd(__u32 key, struct split_commit* out) {
  struct split_commit* in = bpf_map_lookup_elem(&split_commits, &key);
  if (!in) return 0;
  *out = *in;
  if (bpf_map_delete_elem(&split_commits, &key) != 0) return 0;
  SplitChange(SPLIT_DURING_COMMIT, -1);
  return 1;
}

// ---- the parts: what a thread in a timed call is doing

struct split_thread {
  __u64 start_ns;   // when the call began
  __u64 seg_start;  // when its current segment began
  __u32 seg;        // SPLIT_* of the current segment
  __u32 active;     // in a timed call
  __u64 part_ns[SPLIT_PARTS];
  __u64 cum0[SPLIT_OVERLAPS];  // the overlap clock when the call began
  // A switch-in whose wakeup was missed (SplitMissed): the sleep's part it
  // was counted in, how long that sleep lasted, and the thread's
  // sched_info.run_delay then, which the scheduler raises by the wait just
  // after the switch-in.
  __u32 missed_part;  // that part's SPLIT_* + 1; 0: none pending
  __u32 pad;
  __u64 missed_len, missed_delay0;
  // The lock it waits for now (lock.bpf.h; 0: none), part_ns[SPLIT_OTHER]
  // when that wait began, and its holder then; the call's lock waits.
  __u64 lock_at, lock_other0;
  struct split_lock_holder lock_now;
  struct split_lock lock;
};

struct {
  __uint(type, BPF_MAP_TYPE_TASK_STORAGE);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, int);
  __type(value, struct split_thread);
} split_threads SEC(".maps");

// The sleeping functions (split_parts.h): start, end and part of each,
// sorted by start, from /proc/kallsyms (set by user space before loading).
const volatile __u64 wait_lo[SPLIT_WAIT_FNS] = {};
const volatile __u64 wait_hi[SPLIT_WAIT_FNS] = {};
const volatile __u8 wait_part[SPLIT_WAIT_FNS] = {};
const volatile __u32 wait_fns = 0;

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, __u64[SPLIT_STACK_FRAMES]);
} split_stack SEC(".maps");

// The part of the function ip is in, or SPLIT_PARTS for none listed.
static __always_inline __u32 WaitPartOf(__u64 ip) {
  __u32 lo = 0, hi = wait_fns;
  if (hi > SPLIT_WAIT_FNS) hi = SPLIT_WAIT_FNS;
  for (int i = 0; i < 7 && lo < hi; ++i) {  // the first start above ip
    const __u32 mid = (lo + hi) / 2;
    if (mid >= SPLIT_WAIT_FNS) break;
    if (wait_lo[mid] <= ip)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == 0 || lo > SPLIT_WAIT_FNS) return SPLIT_PARTS;
  const __u32 at = lo - 1;
  if (at >= SPLIT_WAIT_FNS || ip >= wait_hi[at]) return SPLIT_PARTS;
  return wait_part[at];
}

// The part of the innermost listed function among frames[from, count);
// SPLIT_PARTS for none.
static __always_inline __u32 InnermostPart(const __u64* frames, long from, long count) {
  for (int i = 0; i < SPLIT_STACK_FRAMES; ++i) {
    if (i >= count) break;
    if (i < from) continue;
    const __u32 p = WaitPartOf(frames[i]);
    if (p < SPLIT_PARTS) return p;
  }
  return SPLIT_PARTS;
}

// What the current task goes to sleep for: the innermost frame of its stack
// in a listed function; SPLIT_OTHER for none. Reading a stack is the
// split's largest cost on a fast device (about 5 us of a victim's
// iteration on 6.18 in a VM, most of it whatever the depth:
// docs/explain.md, "What it costs"). A sleep in fdatasync has 11 to 15
// frames there, its listed function at frame 5 to 7, so the innermost
// SPLIT_STACK_NEAR frames are read first (a fifth less), and the whole
// stack only when none of them is listed and the read filled its buffer
// (the stack may go deeper): the same answer as reading it whole.
static __always_inline __u32 SleepPart(void* ctx, struct split_state* s) {
  __u32 zero = 0;
  __u64* frames = bpf_map_lookup_elem(&split_stack, &zero);
  if (!frames) return SPLIT_OTHER;
  long n = bpf_get_stack(ctx, frames, SPLIT_STACK_NEAR * sizeof(__u64), 0);
  if (n <= 0) {
    if (s) SplitCount(&s->check.stack_misses);
    return SPLIT_OTHER;
  }
  __u32 p = InnermostPart(frames, 0, n / (long)sizeof(__u64));
  if (p < SPLIT_PARTS) return p;
  if (n < (long)(SPLIT_STACK_NEAR * sizeof(__u64))) return SPLIT_OTHER;  // read whole
  n = bpf_get_stack(ctx, frames, SPLIT_STACK_FRAMES * sizeof(__u64), 0);
  if (n <= 0) {
    if (s) SplitCount(&s->check.stack_misses);
    return SPLIT_OTHER;
  }
  p = InnermostPart(frames, SPLIT_STACK_NEAR, n / (long)sizeof(__u64));
  return p < SPLIT_PARTS ? p : SPLIT_OTHER;
}

static __always_inline void SplitClose(struct split_thread* t, __u64 now) {
  if (now > t->seg_start && t->seg < SPLIT_PARTS) t->part_ns[t->seg] += now - t->seg_start;
  t->seg_start = now;
}

// The scheduler's own count of task's waits for a CPU (ns, summed at each
// switch-in, after the sched_switch tracepoint); 0 and *known 0 on a kernel
// without it (CONFIG_SCHED_INFO).
static __always_inline __u64 RunDelay(struct task_struct* task, int* known) {
  *known = bpf_core_field_exists(task->sched_info.run_delay);
  return *known ? BPF_CORE_READ(task, sched_info.run_delay) : 0;
}

// next is switched in while the split still has it asleep: its wakeup ran
// no program. Its whole sleep until now is counted in the sleep's part (t
// is closed after this); how much of it was a wait for a CPU is read later
// (SplitRecover), once the scheduler has added it to run_delay.
static __always_inline void SplitMissed(struct split_thread* t, struct task_struct* next,
                                        __u64 now) {
  struct split_state* s = SplitState();
  int known = 0;
  const __u64 delay = RunDelay(next, &known);
  if (!known) {
    if (s) SplitCount(&s->check.wakeups_unrecovered);
  } else if (t->seg < SPLIT_PARTS) {
    t->missed_part = t->seg + 1;
    t->missed_len = now > t->seg_start ? now - t->seg_start : 0;
    t->missed_delay0 = delay;
  }
  if (s) SplitCount(&s->check.wakeups_missed);
}

// The current run of task (t's thread) is past the switch-in SplitMissed
// saw, with no other switch-in since: the growth of its run_delay is that
// switch-in's wait for a CPU, which moves from the sleep's part to
// waiting for a CPU (at most what the sleep was counted).
static __always_inline void SplitRecover(struct split_thread* t, struct task_struct* task) {
  if (!t->missed_part) return;
  const __u32 part = t->missed_part - 1;
  t->missed_part = 0;
  int known = 0;
  const __u64 delay = RunDelay(task, &known);
  if (!known || delay < t->missed_delay0 || part >= SPLIT_PARTS) return;
  __u64 wait = delay - t->missed_delay0;
  if (wait > t->missed_len) wait = t->missed_len;
  if (wait > t->part_ns[part]) wait = t->part_ns[part];
  t->part_ns[part] -= wait;
  t->part_ns[SPLIT_RUNQ] += wait;
  struct split_state* s = SplitState();
  if (s) __sync_fetch_and_add(&s->check.missed_runq_ns, wait);
}

// t's call began at start, on its CPU; its overlaps count from clock_at.
static __always_inline void SplitStart(struct split_thread* t, __u64 start, __u64 clock_at) {
  for (int i = 0; i < SPLIT_PARTS; ++i) t->part_ns[i] = 0;
  t->missed_part = 0;
  t->lock.wait_ns = 0;
  for (int i = 0; i < SPLIT_LOCK_HOLDERS; ++i) t->lock.held[i].ns = 0;
  t->seg = SPLIT_CPU;
  t->start_ns = t->seg_start = start;
  struct split_state* s = SplitState();
  if (s) SplitClock(s, clock_at, t->cum0);
  t->active = 1;
}

// The current thread begins a timed call at now; null when its storage
// cannot be had (counted by the caller).
static __always_inline struct split_thread* SplitBegin(__u64 now) {
  struct split_thread* t = bpf_task_storage_get(&split_threads, bpf_get_current_task_btf(), 0,
                                                BPF_LOCAL_STORAGE_GET_F_CREATE);
  if (!t) return 0;
  SplitStart(t, now, now);
  return t;
}

#ifdef SPLIT_LAZY
// The includer's (with SPLIT_LAZY defined): the start of a call task is in
// whose split was left to begin when it first leaves its CPU, marked as
// begun; 0 for none. Such a call costs nothing more than its start and end
// unless it sleeps or is preempted.
static __always_inline __u64 SplitLazyStart(struct task_struct* task);

// task leaves its CPU for the first time in a call whose split was left
// for now (*now, read here): its split begins, all of the call until now
// on its CPU (the overlaps count from now: the disk's activity while it
// ran is not wanted). Null when the storage cannot be had: the call's end
// finds its split missing and counts it lost.
static __always_inline struct split_thread* SplitLazy(struct task_struct* task, __u64* now) {
  const __u64 start = SplitLazyStart(task);
  if (!start) return 0;
  struct split_thread* t =
      bpf_task_storage_get(&split_threads, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
  *now = bpf_ktime_get_ns();
  if (t) SplitStart(t, start, *now);
  return t;
}
#endif

// The current thread's call ends at now: its length, parts and overlaps,
// and its lock waits when lock is not null (pointed at in the thread's
// storage, not copied: the caller's stack has no room for them until its
// record is sent); 0 when it was in no timed call.
static __always_inline int SplitEnd(__u64 now, __u64* ns, __u64* parts, __u64* during,
                                    const struct split_lock** lock) {
  struct split_thread* t = bpf_task_storage_get(&split_threads, bpf_get_current_task_btf(), 0, 0);
  if (!t || !t->active) return 0;
  SplitClose(t, now);
  SplitRecover(t, bpf_get_current_task_btf());
  t->active = 0;
  *ns = now > t->start_ns ? now - t->start_ns : 0;
  for (int i = 0; i < SPLIT_PARTS; ++i) parts[i] = t->part_ns[i];
  struct split_state* s = SplitState();
  __u64 cum[SPLIT_OVERLAPS] = {};
  if (s) SplitClock(s, now, cum);
  for (int i = 0; i < SPLIT_OVERLAPS; ++i)
    during[i] = cum[i] > t->cum0[i] ? cum[i] - t->cum0[i] : 0;
  if (lock) {  // a wait's sleep that SplitRecover moved to waiting for a CPU is not a lock's
    if (t->lock.wait_ns > parts[SPLIT_OTHER]) t->lock.wait_ns = parts[SPLIT_OTHER];
    *lock = &t->lock;
  }
  return 1;
}

// A thread in a call leaves its CPU: preempted (or yielding) it waits for a
// CPU; else it sleeps, for what its stack says. The stack is read only
// here, for the threads of timed calls.
SEC("tp_btf/sched_switch")
int BPF_PROG(split_switch, bool preempt, struct task_struct* prev, struct task_struct* next,
             unsigned int prev_state) {
  // Most switches are of threads in no timed call: the clock is read only
  // for one that is (every switch of the machine runs this).
  __u64 now = 0;
  struct split_thread* t = bpf_task_storage_get(&split_threads, prev, 0, 0);
#ifdef SPLIT_LAZY
  if (!t || !t->active) t = SplitLazy(prev, &now);
#endif
  if (t && t->active) {
    if (!now) now = bpf_ktime_get_ns();
    SplitClose(t, now);
    SplitRecover(t, prev);
    t->seg = preempt || prev_state == 0 ? SPLIT_RUNQ : SleepPart(ctx, SplitState());
  }
  t = bpf_task_storage_get(&split_threads, next, 0, 0);
  if (t && t->active) {
    if (!now) now = bpf_ktime_get_ns();
    if (t->seg >= SPLIT_JOURNAL) SplitMissed(t, next, now);  // still asleep: wakeup not seen
    SplitClose(t, now);
    t->seg = SPLIT_CPU;
  }
  return 0;
}

// A sleeping thread in a call is woken: it waits for a CPU from now. (A
// wake-up of a thread still on its CPU changes nothing.)
SEC("tp_btf/sched_wakeup")
int BPF_PROG(split_wakeup, struct task_struct* p) {
  struct split_thread* t = bpf_task_storage_get(&split_threads, p, 0, 0);
  if (!t || !t->active || t->seg < SPLIT_JOURNAL) return 0;
  SplitClose(t, bpf_ktime_get_ns());
  t->seg = SPLIT_RUNQ;
  return 0;
}

// Requests inserted into a watched disk's queue (split_rqs above).
SEC("tp_btf/block_rq_insert")
int BPF_PROG(split_rq_insert, struct request* rq) {
  SplitRqInsert(rq);
  return 0;
}
