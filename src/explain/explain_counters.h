// SPDX-License-Identifier: (MIT OR GPL-2.0)
// The counters explain.bpf.c keeps per CPU and writelab reads: shared by the
// BPF program (C, with vmlinux.h's types) and user space (C++).
#ifndef WRITELAB_EXPLAIN_COUNTERS_H
#define WRITELAB_EXPLAIN_COUNTERS_H

#define EXPLAIN_HIST_SLOTS 40  // log2 buckets: slot k counts values in [2^k, 2^(k+1))
#define EXPLAIN_CALL_NRS 8     // system calls timed, at most
#define EXPLAIN_SYNC_PARTS 3
#define EXPLAIN_PART_DATA 0     // a write request in flight on the device
#define EXPLAIN_PART_JOURNAL 1  // a journal commit of the file system running
#define EXPLAIN_PART_FLUSH 2    // a cache flush in flight on the device

// What the target is doing (explain.bpf.c's `state` map).
struct explain_target_state {
  __s64 commits, flushes, writes;
  __s64 calls;  // timed calls in flight
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
  // write and sync calls of writelab's threads (call_nrs), and their parts
  __u64 syncs, sync_ns, sync_overattributed;
  __u64 sync_hist[EXPLAIN_HIST_SLOTS];
  __u64 sync_part_ns[EXPLAIN_SYNC_PARTS];
  __u64 sync_part_hist[EXPLAIN_SYNC_PARTS][EXPLAIN_HIST_SLOTS];
  // blk-wbt on the target disk: its step changes, and the windows whose
  // latency passed the target (throttling engaged)
  __u64 wbt_steps, wbt_lat_events;
};

#endif
