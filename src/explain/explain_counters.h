// SPDX-License-Identifier: (MIT OR GPL-2.0)
// The counters explain.bpf.c keeps per CPU and writelab reads: shared by the
// BPF program (C, with vmlinux.h's types) and user space (C++).
#ifndef WRITELAB_EXPLAIN_COUNTERS_H
#define WRITELAB_EXPLAIN_COUNTERS_H

#define EXPLAIN_HIST_SLOTS 40  // log2 buckets: slot k counts values in [2^k, 2^(k+1))
#define EXPLAIN_CALL_NRS 8     // system calls timed, at most

// The parts and overlaps of a timed call.
#include "split_parts.h"

// Whose writes were queued to the target's device while writelab's timed
// calls ran (docs/explain.md, "Who was ahead of the calls"), by culprit.
#define EXPLAIN_AHEAD_SELF 0        // writelab's own files, or its direct I/O
#define EXPLAIN_AHEAD_BACKGROUND 1  // the files and processes user space named the background's
#define EXPLAIN_AHEAD_JOURNAL 2     // the target journal's own blocks (its thread's)
#define EXPLAIN_AHEAD_METADATA 3    // other pages of the block device: metadata
#define EXPLAIN_AHEAD_OTHER 4       // anyone else's files or I/O
#define EXPLAIN_AHEAD_CULPRITS 5

// A file user space names (explain.bpf.c's ahead_files key).
struct ahead_file {
  __u32 dev, pad;  // the file system's dev_t (kernel encoding)
  __u64 ino;
};

struct explain_counters {
  // block layer, write requests on the target device
  __u64 rq_issued, rq_completed, rq_bytes;
  __u64 q2d_ns, d2c_ns;
  __u64 q2d_hist[EXPLAIN_HIST_SLOTS], d2c_hist[EXPLAIN_HIST_SLOTS], size_hist[EXPLAIN_HIST_SLOTS];
  __u64 back_merges, front_merges, rq_merges;
  __u64 flush_rqs, flush_ns;  // FLUSH and FUA requests, issue to complete
  // balance_dirty_pages on writelab's threads
  __u64 throttle_events, throttle_pause_j;
  // write bios queued for the target device: by writelab's threads, by others
  __u64 wb_own_bytes, wb_other_bytes;
  __u64 jbd2_bytes;  // of the others', queued by a journal thread (jbd2/...)
  // ext4 and jbd2 on the target file system
  __u64 conversions, conversion_blocks;
  __u64 commits, fast_commits, commit_stats, blocks_logged;
  __u64 commit_running_j, commit_locked_j, commit_flushing_j, commit_logging_j;
  __u64 hz;  // CONFIG_HZ, for the jiffies above (0: unknown)
  // write and sync calls of writelab's threads (call_nrs): what the thread
  // did (SPLIT_*), and what the device and journal did meanwhile
  __u64 syncs, sync_ns, sync_unbalanced;
  __u64 sync_hist[EXPLAIN_HIST_SLOTS];
  __u64 sync_part_ns[SPLIT_PARTS];
  __u64 sync_during_ns[SPLIT_OVERLAPS];
  // blk-wbt on the target disk: its step changes, and the windows whose
  // latency passed the target (throttling engaged)
  __u64 wbt_steps, wbt_lat_events;
  // bytes queued for the target device while a timed call ran, by culprit
  // (EXPLAIN_AHEAD_*)
  __u64 ahead_bytes[EXPLAIN_AHEAD_CULPRITS];
  // the split's self-check (split_parts.h's split_check), added by user
  // space when it reads the counters, not by the programs
  __u64 rq_requeued, rq_reissued, rq_reinserted, rq_lost, commits_unended, stack_misses,
      wakeups_missed, missed_runq_ns, wakeups_unrecovered, rq_found_ended, rq_untracked;
};

#endif
