// SPDX-License-Identifier: (MIT OR GPL-2.0)
// How a timed call's time is split, shared by both BPF programs
// (split.bpf.h) and user space (docs/explain.md, "The split").
//
// The parts (SPLIT_*) say what the calling thread itself was doing, from
// the scheduler's events: on a CPU; runnable, waiting for one (from its
// wake-up to its switch-in, or preempted); or asleep, by the kernel
// function it slept in (its stack at the switch-out, innermost match
// first). They are disjoint and add up to the call.
//
// The overlaps (SPLIT_DURING_*) say what the disk and the journal were
// doing meanwhile, whoever asked: a commit running; else a cache flush in
// flight; else a write request in flight. They are disjoint too, but they
// are not causes: a call that never waited for the disk may overlap a
// flush from start to end.
#ifndef WRITELAB_SPLIT_PARTS_H
#define WRITELAB_SPLIT_PARTS_H

#define SPLIT_CPU 0      // on a CPU (the call's own work, interrupts on its CPU)
#define SPLIT_RUNQ 1     // runnable, waiting for a CPU
#define SPLIT_JOURNAL 2  // asleep for a journal commit or journal space (jbd2, xfs log)
#define SPLIT_WRITEBACK \
  3                       // asleep for its data to reach the disk: page writeback, buffers,
                          // direct I/O, a free request slot of the disk
#define SPLIT_FLUSH 4     // asleep for a cache flush (blkdev_issue_flush)
#define SPLIT_THROTTLE 5  // asleep in balance_dirty_pages (dirty throttling)
#define SPLIT_OTHER 6     // asleep on anything else: locks, pipes, page faults, timers
#define SPLIT_PARTS 7

#define SPLIT_DURING_COMMIT 0  // a journal commit of the file system ran
#define SPLIT_DURING_FLUSH 1   // else a cache flush (FLUSH request) was in flight on the disk
#define SPLIT_DURING_WRITES 2  // else a write request was in flight on the disk
#define SPLIT_OVERLAPS 3

// The kernel functions a sleep is classified by: user space resolves their
// address ranges from /proc/kallsyms, sorted by start, at most this many.
#define SPLIT_WAIT_FNS 48
// Stack frames read at a switch-out: the innermost SPLIT_STACK_NEAR first,
// the whole stack (at most SPLIT_STACK_FRAMES) only when none of those is
// a listed function and the stack goes deeper.
#define SPLIT_STACK_FRAMES 48
#define SPLIT_STACK_NEAR 8

// A request still in flight this long after its issue was lost (its
// completion never reached the tracepoint): the block layer's own timeout.
#define SPLIT_RQ_LOST_NS (30ull * 1000000000ull)
// Requests the overlaps can hold in flight at once, on all watched disks
// (the sweep below reads every slot: its cost grows with this).
#define SPLIT_RQS 16384
// How often, at most, the requests counted in flight are compared with
// the kernel's own state of each (struct request's state), at an issue
// while another is in flight: one whose end ran none of the programs is
// dropped at the next sweep, counted in rq_found_ended.
#define SPLIT_RQ_SWEEP_NS (20ull * 1000000ull)
// A request issued less long ago than this is left to the sweep after:
// the issue's event comes just before the kernel marks it in flight.
#define SPLIT_RQ_SETTLE_NS (1000000ull)

// The self-check of the state the overlaps are read from (split.bpf.h's
// split_state): what was repaired or given up on, and what is in flight.
struct split_check {
  __u64 rq_requeued;          // requests given back by the driver before completing
  __u64 rq_reissued;          // requests issued again without a completion or requeue between
  __u64 rq_reinserted;        // requests inserted again while counted in flight
  __u64 rq_lost;              // requests dropped from in flight after SPLIT_RQ_LOST_NS
  __u64 commits_unended;      // commits started again before their end was seen
  __u64 stack_misses;         // switch-outs whose stack could not be read: counted as other
  __u64 wakeups_missed;       // switch-ins of a thread the split still had asleep: its
                              // wakeup ran no program
  __u64 missed_runq_ns;       // their waits for a CPU, read from the scheduler's own
                              // count (sched_info.run_delay) at the thread's next
                              // switch-out or the call's end, moved from the sleep's part
                              // to waiting for a CPU
  __u64 wakeups_unrecovered;  // of wakeups_missed, those whose wait could not be read (a
                              // kernel without CONFIG_SCHED_INFO): left in the sleep's part
  __u64 rq_found_ended;       // requests the sweep found no longer in flight in the kernel
                              // (their completion or requeue ran no program): each counted
                              // in flight up to SPLIT_RQ_SWEEP_NS too long
  __u64 rq_untracked;         // requests not counted in flight: SPLIT_RQS were already
};

// A call's waits for contended sleeping locks (a rw_semaphore, a mutex:
// the kernel's lock:contention_begin/end), `writelab explain -- CMD` only
// (trace.bpf.c, lock.bpf.h): the sleep counted as other sleep between
// each wait's begin and end, and per holder seen at a wait's begin, the
// sleep of its waits.
#define SPLIT_LOCK_UNSEEN \
  0                           // no holder seen: none at that instant, or a kind of
                              // lock whose holder is not recorded (percpu, rt)
#define SPLIT_LOCK_HELD 1     // a writer of a rw_semaphore, or a mutex's owner
#define SPLIT_LOCK_READERS 2  // a rw_semaphore held shared: its readers are not kept
#define SPLIT_LOCK_FLUSHER \
  3  // held by a kernel thread writing a file's pages back (a flusher): tgid and
     // comm are the process that last dirtied a page of that file
struct split_lock_holder {
  __u64 ns;       // other sleep inside the waits for locks it held
  __u32 holder;   // SPLIT_LOCK_*
  __u32 tgid;     // SPLIT_LOCK_HELD: the holder's process; SPLIT_LOCK_FLUSHER: the dirtier
  char comm[16];  // and its thread's name
};
// The holders a call keeps. A wait held by a fourth replaces the holder
// with the least time if it is longer (whose time is then not charged);
// else it is not charged itself.
#define SPLIT_LOCK_HOLDERS 3
struct split_lock {
  __u64 wait_ns;  // other sleep inside the call's lock waits, whoever held the locks
  struct split_lock_holder held[SPLIT_LOCK_HOLDERS];  // ns 0: a free slot
};

// The state the overlaps are read from (split.bpf.h's split_state map).
struct split_state {
  __s64 counts[SPLIT_OVERLAPS];   // commits running, flushes and writes in flight
  __u64 last_ns;                  // when cum was last brought up to date
  __u64 cum[SPLIT_OVERLAPS + 1];  // time under each overlap (the last: none), summed
  __u64 last_reap_ns;             // the last look for lost requests
  struct split_check check;       // what was repaired or given up on
};

// A request in flight (split_rqs, keyed by the struct request).
struct split_rq {
  __u64 issue_ns;
  __u32 during;  // SPLIT_DURING_FLUSH or SPLIT_DURING_WRITES
  __u32 pad;
};

// A commit running (split_commits, keyed by the file system's dev_t), and
// its wait for the handles open on its transaction (jbd2's locked state,
// from jbd2_commit_locking to jbd2_commit_flushing; 0: not seen): handle
// is the thread whose handle stopped last in it, the one the commit waited
// for (holder SPLIT_LOCK_HELD, or SPLIT_LOCK_FLUSHER for a flusher, named
// by its file's dirtier; ns: from the lock to that stop).
struct split_commit {
  __u64 start_ns, journal_bytes0, tid;
  __u64 locked_ns, unlocked_ns;
  struct split_lock_holder handle;
};

#endif  // WRITELAB_SPLIT_PARTS_H
