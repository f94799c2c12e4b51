// SPDX-License-Identifier: (MIT OR GPL-2.0)
// What trace.bpf.c (`writelab explain -- CMD`) keeps and sends, shared by the
// BPF program (C, vmlinux.h's types) and user space (C++): the classes of
// timed calls, the per-file statistics, the latency histograms per class,
// and the records of slow calls and journal commits in its ring buffer.
#ifndef WRITELAB_TRACE_COUNTERS_H
#define WRITELAB_TRACE_COUNTERS_H

// The calls timed (TRACE_KIND_*): the system calls, then io_uring's
// operations (from submission to completion).
#define TRACE_KIND_WRITE 0
#define TRACE_KIND_PWRITE64 1
#define TRACE_KIND_WRITEV 2
#define TRACE_KIND_PWRITEV 3
#define TRACE_KIND_PWRITEV2 4
#define TRACE_KIND_FSYNC 5
#define TRACE_KIND_FDATASYNC 6
#define TRACE_KIND_SYNC_FILE_RANGE 7
#define TRACE_KIND_MSYNC 8
#define TRACE_KIND_SYNCFS 9
#define TRACE_KIND_SYNC 10
#define TRACE_SYSCALL_KINDS 11
#define TRACE_KIND_URING_WRITE 11
#define TRACE_KIND_URING_FSYNC 12
#define TRACE_KIND_URING_SYNC_FILE_RANGE 13
#define TRACE_KINDS 14

// A call's class bits, beside its kind: a write made synchronous by the
// fd's O_SYNC/O_DSYNC or by RWF_SYNC/RWF_DSYNC, and an O_DIRECT one.
#define TRACE_CLASS_SYNC 1
#define TRACE_CLASS_DIRECT 2
#define TRACE_CLASSES (TRACE_KINDS * 4)  // kind * 4 + class bits

// A durability call (every one is delivered, and `top` counts them):
// fsync, fdatasync, sync_file_range, msync, syncfs, sync, a synchronous
// write, io_uring's fsync and sync_file_range.
static inline int TraceIsDurability(__u32 class_id) {
  const __u32 kind = class_id / 4;
  return (class_id & TRACE_CLASS_SYNC) || (kind >= TRACE_KIND_FSYNC && kind <= TRACE_KIND_SYNC) ||
         kind == TRACE_KIND_URING_FSYNC || kind == TRACE_KIND_URING_SYNC_FILE_RANGE;
}

// The parts and overlaps of a call: split_parts.h.
#include "split_parts.h"

// Latency histograms: log-linear, 8 buckets per power of two (a value's
// bucket is at most 1/8 of its lower bound wide); below 8 ns one a value.
#define TRACE_HIST_SUB_BITS 3
#define TRACE_HIST_BUCKETS ((64 - TRACE_HIST_SUB_BITS + 1) << TRACE_HIST_SUB_BITS)

struct trace_hist {
  __u64 buckets[TRACE_HIST_BUCKETS];
};

// Per file and class: the key (dev_t in the kernel's encoding, inode) and
// what its calls added up to.
struct trace_file_key {
  __u32 dev;
  __u32 class_id;  // kind * 4 + class bits
  __u64 ino;
};
struct trace_file_stats {
  __u64 calls, bytes, ns, max_ns;
  __u64 part_ns[SPLIT_PARTS];       // what the calling threads did (split_parts.h)
  __u64 during_ns[SPLIT_OVERLAPS];  // what the disk and journal did meanwhile
  __u64 errors;                     // calls that returned an error
  __u64 commits, conversions;       // that ran on the file system during its calls
  __u64 lock_ns;                    // of part_ns[SPLIT_OTHER]: in contended locks' waits
};

// Totals of the whole run.
struct trace_totals {
  __u64 lost_files;   // calls not counted by file: the file map was full
  __u64 lost_calls;   // calls not timed: the map of calls in flight was full
  __u64 lost_events;  // records the ring buffer had no room for
  __u64 lost_scope;   // processes not followed: the scope map was full
  __u64 unbalanced;   // calls whose parts did not add up to the call (a bug if not 0)
  __u64 commits, conversions, journal_bytes;
  __u64 fallocates;  // fallocate calls of the scope (any file)
  __u64 hz;
  __u64 charges_lost;  // bytes not charged to anyone: more disks and file systems than groups
};

// The ring buffer's records.
#define TRACE_EVENT_CALL 1    // a slow call, or a durability call
#define TRACE_EVENT_COMMIT 2  // a journal commit ended
#define TRACE_EVENT_STATS 3   // jbd2's statistics of a commit
#define TRACE_EVENT_FILE 4    // a file first seen: its name, for one closed before user space looks

struct trace_call_event {
  __u32 type;  // TRACE_EVENT_CALL
  __u32 class_id;
  __u64 start_ns, ns;
  __u32 tid, tgid;
  __s32 fd;
  __u32 dev;
  __u64 ino;
  __s64 ret;
  __u64 part_ns[SPLIT_PARTS];
  __u64 during_ns[SPLIT_OVERLAPS];
  __u64 commits, conversions;  // started on the file system during the call
  struct split_lock lock;      // its waits for contended locks, and each holder's
};

struct trace_commit_event {
  __u32 type;  // TRACE_EVENT_COMMIT
  __u32 dev;
  __u64 start_ns, end_ns;
  __u64 tid;            // the transaction
  __u64 journal_bytes;  // what the journal thread queued for the device meanwhile
};

struct trace_stats_event {
  __u32 type;  // TRACE_EVENT_STATS
  __u32 dev;
  __u64 tid;
  __u64 blocks_logged;
  __u64 running_j, locked_j, flushing_j, logging_j;
};

// Who made a call wait (docs/explain.md, "Who made it wait"): the bytes
// written to the watched disks, each charged to the process behind it,
// gathered in windows and sent as TRACE_EVENT_CHARGE records.
// A window of a disk (dev: the disk) holds the writes queued to it from t0
// to t1, and the write bytes its requests completed; it ends when a cache
// flush is issued to the disk (flush = 1), which makes the device write
// them, or with the first write queued or completed TRACE_CHARGE_WINDOW_NS
// or more after it began, which begins the next: it then ends (t1) at its
// last charge before that, never across a quiet stretch after it
// (trace_blame_window).
// A commit's record (dev: the file system) holds what its journal thread
// queued while the commit ran: the ordered data it wrote first, and its
// log blocks. A dirty window (dev: the file system) holds the pages
// dirtied on it from t0 to t1, per process and file (a writer's last 256
// KiB on a CPU may wait there for its next page), and ends as a disk's
// window does, at its last charge.
#define TRACE_EVENT_CHARGE 5
#define TRACE_CHARGE_WINDOW 0
#define TRACE_CHARGE_COMMIT 1
#define TRACE_CHARGE_DIRTY 2  // pages dirtied on a file system (dev), per dirtier
#define TRACE_CHARGE_WINDOW_NS 10000000ull
#define TRACE_CHARGE_ENTRIES 16

// What a write is charged to.
#define TRACE_CAUSE_PROCESS \
  0                             // a process: the one that dirtied the pages (page cache
                                // writeback, by whichever thread) or issued the I/O (direct)
#define TRACE_CAUSE_JOURNAL 1   // a journal thread's own blocks (log, descriptors, commit)
#define TRACE_CAUSE_METADATA 2  // other block-device pages (metadata, checkpoints)
#define TRACE_CAUSE_UNKNOWN \
  3  // a file's pages dirtied before tracing began, or a
     // kernel thread's I/O with no process behind it
// Causes of a call's lock waits (split_lock), user space only: no write is
// charged to them.
#define TRACE_CAUSE_LOCK 4          // a lock held by a process (tgid): SPLIT_LOCK_HELD
#define TRACE_CAUSE_LOCK_READERS 5  // a rw_semaphore held by readers: SPLIT_LOCK_READERS
#define TRACE_CAUSE_LOCK_FLUSHER \
  6  // a lock held by a flusher writing back pages a process (tgid) dirtied:
     // SPLIT_LOCK_FLUSHER
// Causes of a call's journal waits that a commit spent waiting for an open
// handle (trace_charge_event's handle): no write is charged to them.
#define TRACE_CAUSE_HANDLE 7  // a journal handle held by a thread of a process (tgid)
#define TRACE_CAUSE_HANDLE_FLUSHER \
  8  // a journal handle held by a flusher writing back pages a process (tgid) dirtied

struct trace_charge {
  __u32 tgid;   // TRACE_CAUSE_PROCESS: the process (0 otherwise)
  __u16 cause;  // TRACE_CAUSE_*
  __u16 pad;
  __u32 dev;  // the file's file system (0: not a file's page, e.g. direct I/O)
  __u32 pad2;
  __u64 ino;
  __u64 bytes;
  char comm[16];  // the process's (thread's) name when it dirtied or issued them
};

struct trace_charge_event {
  __u32 type;   // TRACE_EVENT_CHARGE
  __u32 kind;   // TRACE_CHARGE_WINDOW or TRACE_CHARGE_COMMIT
  __u32 dev;    // the disk, or the file system
  __u32 flush;  // a window ended by a cache flush issued to its disk
  __u64 t0, t1;
  __u64 tid;         // a commit's transaction
  __u32 n, pad;      // entries filled
  __u64 rest_bytes;  // beyond the entries: not named
  // A disk's window: the write bytes its requests completed meanwhile (what
  // left the queue, whoever's), so that user space can tell what was still
  // queued at an instant (blame.h's backlog).
  __u64 done_bytes;
  // A commit: its wait for the handles open on its transaction, and whose
  // handle it waited for last (split_commit; 0: not seen).
  __u64 locked_ns, unlocked_ns;
  struct split_lock_holder handle;
  struct trace_charge e[TRACE_CHARGE_ENTRIES];
};
// A record in the ring is its head and its n entries, no more.
#define TRACE_CHARGE_HEAD __builtin_offsetof(struct trace_charge_event, e)

// A culprit of a window or commit.
struct trace_blame_key {
  __u32 domain;  // the disk (a window) or the file system (a commit)
  __u16 kind;    // TRACE_CHARGE_WINDOW or TRACE_CHARGE_COMMIT
  __u16 cause;   // TRACE_CAUSE_*
  __u32 tgid;
  __u32 dev;
  __u64 ino;
};
struct trace_blame_val {
  __u64 bytes;
  char comm[16];
};

// The charges not yet sent (blame.bpf.h), per group: the open window of a
// disk, commit or dirty window of a file system (domain and kind). The
// first TRACE_CHARGE_ENTRIES culprits charged in a window each hold a
// slot; the rest are summed. User space reads the groups still open at
// the end.
#define TRACE_BLAME_GROUPS 192
#define TRACE_SLOT_FREE 0
#define TRACE_SLOT_CLAIMED 1  // its key is being written
#define TRACE_SLOT_READY 2
struct trace_blame_slot {
  __u32 state;  // TRACE_SLOT_*
  __u32 pad;
  struct trace_blame_key key;
  struct trace_blame_val val;
};
// An open window of a disk or of pages dirtied: when it began, and when it
// was last charged.
struct trace_blame_window {
  __u64 t0, last;
};

struct trace_blame_group {
  __u64 rest_bytes;
  __u64 done_bytes;  // a disk's: write bytes its requests completed (block_rq_complete)
  struct trace_blame_slot s[TRACE_CHARGE_ENTRIES];
};

#define TRACE_NAME_LEN 48
#define TRACE_PATH_PARTS 12

struct trace_file_event {
  __u32 type;  // TRACE_EVENT_FILE
  __u32 dev;
  __u64 ino;
  __u32 parts;     // path components sent, from the file up
  __u32 complete;  // 1: they reach the root (else the path is cut short)
  char name[TRACE_PATH_PARTS][TRACE_NAME_LEN];  // name[0] the file's, name[1] its directory's...
};

#endif  // WRITELAB_TRACE_COUNTERS_H
