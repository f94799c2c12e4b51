// SPDX-License-Identifier: (MIT OR GPL-2.0)
// writelab --explain: where the time went, aggregated in the kernel.
//
// Counters only, no event stream: every program adds to one per-CPU
// `struct explain_counters` (explain_counters.h), which user space reads
// and subtracts around a row or a phase. Filters, set before loading:
//   target_tgid   writelab's process: sync calls, throttling
//   fs_dev        the target file system's s_dev: conversions, jbd2
//   block_devs    the target's disk and its partitions: block requests
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "block.bpf.h"
#include "explain_counters.h"

#include "split.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

const volatile __u32 target_tgid = 0;
const volatile __u32 fs_dev = 0;
const volatile long call_nrs[EXPLAIN_CALL_NRS] = {-1, -1, -1, -1, -1, -1, -1, -1};
extern unsigned int CONFIG_HZ __kconfig __weak;

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct explain_counters);
} counters SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 64);
  __type(key, __u32);  // dev_t, the kernel's encoding (major << 20 | minor)
  __type(value, __u8);
} block_devs SEC(".maps");

static __always_inline struct explain_counters* Counters(void) {
  __u32 zero = 0;
  return bpf_map_lookup_elem(&counters, &zero);
}

static __always_inline int Log2(__u64 v) {
  int r = 0;
  while (v > 1 && r < EXPLAIN_HIST_SLOTS - 1) {
    v >>= 1;
    ++r;
  }
  return r;
}

static __always_inline void Hist(__u64* hist, __u64 v) {
  int slot = Log2(v);
  if (slot >= 0 && slot < EXPLAIN_HIST_SLOTS) hist[slot]++;
}

static __always_inline int Ours(void) { return (bpf_get_current_pid_tgid() >> 32) == target_tgid; }

static __always_inline int OnTarget(__u32 dev) {
  return bpf_map_lookup_elem(&block_devs, &dev) != 0;
}

// ---- block layer: queue (allocation to issue) and device (issue to complete)

SEC("tp_btf/block_rq_issue")
int BPF_PROG(rq_issue, struct request* rq) {
  if (!OnTarget(DiskDev(rq))) return 0;
  const __u32 opf = BPF_CORE_READ(rq, cmd_flags);
  if (!IsWrite(opf) && !IsFlush(opf)) return 0;
  const __u64 now = bpf_ktime_get_ns();
  SplitRqIssue(rq, opf);
  struct explain_counters* c = Counters();
  if (!c || !IsWrite(opf)) return 0;
  const __u64 start = BPF_CORE_READ(rq, start_time_ns);
  const __u64 queued = start && start < now ? now - start : 0;
  c->rq_issued++;
  c->q2d_ns += queued;
  Hist(c->q2d_hist, queued);
  const __u32 bytes = BPF_CORE_READ(rq, __data_len);
  c->rq_bytes += bytes;
  Hist(c->size_hist, bytes);
  return 0;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(rq_complete, struct request* rq, blk_status_t error, unsigned int nr_bytes) {
  const __u64 issued_at = SplitRqDone(rq);  // only the target's requests are in flight
  if (!issued_at) return 0;
  const __u64 now = bpf_ktime_get_ns();
  const __u64 d2c = now > issued_at ? now - issued_at : 0;
  const __u32 opf = BPF_CORE_READ(rq, cmd_flags);
  struct explain_counters* c = Counters();
  if (!c) return 0;
  if (IsFlush(opf)) {
    c->flush_rqs++;
    c->flush_ns += d2c;
  }
  if (IsWrite(opf)) {
    c->rq_completed++;
    c->d2c_ns += d2c;
    Hist(c->d2c_hist, d2c);
  }
  return 0;
}

// A request the driver gave back (BLK_STS_RESOURCE...) is issued again
// later: it is no longer in flight.
SEC("tp_btf/block_rq_requeue")
int BPF_PROG(rq_requeue, struct request* rq) {
  if (!SplitRqRequeue(rq)) return 0;
  const __u32 opf = BPF_CORE_READ(rq, cmd_flags);
  struct explain_counters* c = Counters();
  if (c && IsWrite(opf)) c->rq_issued--;  // counted again at its next issue
  return 0;
}

static __always_inline void BioMerge(struct bio* bio, int front) {
  if (!IsWrite(BPF_CORE_READ(bio, bi_opf))) return;
  if (!OnTarget(BPF_CORE_READ(bio, bi_bdev, bd_dev))) return;
  struct explain_counters* c = Counters();
  if (!c) return;
  if (front)
    c->front_merges++;
  else
    c->back_merges++;
}

// The thread of the target file system's journal (jbd2/DEV-8): set from
// journal->j_task at every commit the target's journal starts.
volatile __u32 jbd2_tid = 0;

// ---- who was ahead of the timed calls: the bytes queued for the target
// while any of them ran, charged by file (the files user space named its
// own and the background's) or issuer (direct I/O)

// Timed calls in flight (reset by user space at each attach).
volatile __s64 timed_in_flight = 0;

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 64);
  __type(key, struct ahead_file);
  __type(value, __u8);  // EXPLAIN_AHEAD_SELF or EXPLAIN_AHEAD_BACKGROUND
} ahead_files SEC(".maps");
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 64);
  __type(key, __u32);   // a process (tgid)
  __type(value, __u8);  // EXPLAIN_AHEAD_BACKGROUND
} ahead_tgids SEC(".maps");

// What the background's processes fork is the background's too (a command
// load's shell and its children).
SEC("tp_btf/sched_process_fork")
int BPF_PROG(ahead_fork, struct task_struct* parent, struct task_struct* child) {
  __u32 ptgid = BPF_CORE_READ(parent, tgid);
  __u8* who = bpf_map_lookup_elem(&ahead_tgids, &ptgid);
  if (!who) return 0;
  __u32 ctgid = BPF_CORE_READ(child, tgid);
  __u8 w = *who;
  bpf_map_update_elem(&ahead_tgids, &ctgid, &w, BPF_ANY);
  return 0;
}

// The culprit of a write bio, from its first page.
static __always_inline __u32 AheadCulprit(struct bio* bio, __u32 tid) {
  struct inode* host = 0;
  const enum bio_owner owner = BioOwner(bio, &host);
  if (owner == BIO_USER_MEMORY) {  // direct I/O, by its issuer
    if (Ours()) return EXPLAIN_AHEAD_SELF;
    __u32 tgid = bpf_get_current_pid_tgid() >> 32;
    __u8* who = bpf_map_lookup_elem(&ahead_tgids, &tgid);
    return who ? *who : EXPLAIN_AHEAD_OTHER;
  }
  if (owner == BIO_BLOCK_DEVICE)
    return jbd2_tid && tid == jbd2_tid ? EXPLAIN_AHEAD_JOURNAL : EXPLAIN_AHEAD_METADATA;
  struct ahead_file f = {BPF_CORE_READ(host, i_sb, s_dev), 0, BPF_CORE_READ(host, i_ino)};
  __u8* who = bpf_map_lookup_elem(&ahead_files, &f);
  return who ? *who : EXPLAIN_AHEAD_OTHER;
}

// Who started the writeback: bytes of write bios queued for the target by
// writelab's own threads (sync_file_range, O_DIRECT, fsync) or by anyone
// else (the kernel's flusher, other processes).
SEC("tp_btf/block_bio_queue")
int BPF_PROG(wb_queue, struct bio* bio) {
  if (!IsWrite(BPF_CORE_READ(bio, bi_opf))) return 0;
  if (!OnTarget(BPF_CORE_READ(bio, bi_bdev, bd_dev))) return 0;
  struct explain_counters* c = Counters();
  if (!c) return 0;
  const __u32 bytes = BPF_CORE_READ(bio, bi_iter.bi_size);
  const __u32 tid = (__u32)bpf_get_current_pid_tgid();
  if (timed_in_flight > 0) {
    const __u32 who = AheadCulprit(bio, tid);
    if (who < EXPLAIN_AHEAD_CULPRITS) c->ahead_bytes[who] += bytes;
  }
  if (Ours()) {
    c->wb_own_bytes += bytes;
    return 0;
  }
  c->wb_other_bytes += bytes;
  // The target journal's own thread (its journal_t's j_task, taken by the
  // commit programs), not any process that names itself "jbd2/...": its log,
  // and the data its commits carry.
  if (jbd2_tid && tid == jbd2_tid) c->jbd2_bytes += bytes;
  return 0;
}

// blk-wbt on the target disk (its bdi's owner is the disk's device): a
// step is a change of how many background writes it lets in flight; a
// latency event, a window whose reads or syncs waited past the target.
static __always_inline int WbtOnTarget(struct backing_dev_info* bdi) {
  return OnTarget((__u32)BPF_CORE_READ(bdi, owner, devt));
}

SEC("tp_btf/wbt_step")
int BPF_PROG(wbt_step, struct backing_dev_info* bdi, const char* msg, int step,
             unsigned long window, unsigned int bg, unsigned int normal, unsigned int max) {
  if (!WbtOnTarget(bdi)) return 0;
  struct explain_counters* c = Counters();
  if (c) c->wbt_steps++;
  return 0;
}

SEC("tp_btf/wbt_lat")
int BPF_PROG(wbt_lat, struct backing_dev_info* bdi, unsigned long lat) {
  if (!WbtOnTarget(bdi)) return 0;
  struct explain_counters* c = Counters();
  if (c) c->wbt_lat_events++;
  return 0;
}

SEC("tp_btf/block_bio_backmerge")
int BPF_PROG(bio_backmerge, struct bio* bio) {
  BioMerge(bio, 0);
  return 0;
}

SEC("tp_btf/block_bio_frontmerge")
int BPF_PROG(bio_frontmerge, struct bio* bio) {
  BioMerge(bio, 1);
  return 0;
}

SEC("tp_btf/block_rq_merge")
int BPF_PROG(rq_merge, struct request* rq) {
  if (!OnTarget(DiskDev(rq)) || !IsWrite(BPF_CORE_READ(rq, cmd_flags))) return 0;
  struct explain_counters* c = Counters();
  if (c) c->rq_merges++;
  return 0;
}

// ---- writeback throttling of writelab's writers

// Set by user space to count only the writer's threads in writer_tids (the
// stream experiment's writer, not its bystander probe, whose pauses would
// be counted twice against the writer's time).
volatile __u32 filter_writers = 0;

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 16);
  __type(key, __u32);
  __type(value, __u8);
} writer_tids SEC(".maps");

// The pause is in jiffies; user space checks the tracepoint's signature
// (nine arguments, the seventh a long) before it loads this program.
SEC("tp_btf/balance_dirty_pages")
int BPF_PROG(throttle, void* wb, void* dtc, unsigned long dirty_ratelimit,
             unsigned long task_ratelimit, unsigned long dirtied, unsigned long period,
             long pause) {
  if (!Ours()) return 0;
  const __u32 tid = (__u32)bpf_get_current_pid_tgid();
  if (filter_writers && !bpf_map_lookup_elem(&writer_tids, &tid)) return 0;
  struct explain_counters* c = Counters();
  if (!c) return 0;
  c->throttle_events++;
  if (pause > 0) c->throttle_pause_j += pause;
  c->hz = CONFIG_HZ;
  return 0;
}

// ---- ext4 and jbd2 on the target file system

// ext4 maps an unwritten extent with EXT4_GET_BLOCKS_CONVERT (0x10) when
// a write into it completes: the unwritten-to-written conversion.
SEC("tp_btf/ext4_ext_handle_unwritten_extents")
int BPF_PROG(conversion, struct inode* inode, struct ext4_map_blocks* map, int flags) {
  if (!(flags & 0x10) || BPF_CORE_READ(inode, i_sb, s_dev) != fs_dev) return 0;
  struct explain_counters* c = Counters();
  if (!c) return 0;
  c->conversions++;
  c->conversion_blocks += BPF_CORE_READ(map, m_len);
  return 0;
}

SEC("tp_btf/jbd2_start_commit")
int BPF_PROG(commit_start, journal_t* journal) {
  if (BPF_CORE_READ(journal, j_fs_dev, bd_dev) != fs_dev) return 0;
  jbd2_tid = BPF_CORE_READ(journal, j_task, pid);
  SplitCommitStart(fs_dev, 0, 0);
  struct explain_counters* c = Counters();
  if (c) c->commits++;
  return 0;
}

SEC("tp_btf/jbd2_end_commit")
int BPF_PROG(commit_end, journal_t* journal) {
  struct split_commit open;
  if (BPF_CORE_READ(journal, j_fs_dev, bd_dev) == fs_dev) SplitCommitEnd(fs_dev, &open);
  return 0;
}

// ext4's fast commits, which take the place of a jbd2 commit for an fsync
// (a key of their own beside the file system's jbd2 commits).
#define FAST_COMMIT_KEY (fs_dev ^ 0x80000000u)

SEC("tp_btf/ext4_fc_commit_start")
int BPF_PROG(fc_start, struct super_block* sb) {
  if (BPF_CORE_READ(sb, s_dev) != fs_dev) return 0;
  SplitCommitStart(FAST_COMMIT_KEY, 0, 0);
  struct explain_counters* c = Counters();
  if (c) c->fast_commits++;
  return 0;
}

SEC("tp_btf/ext4_fc_commit_stop")
int BPF_PROG(fc_stop, struct super_block* sb) {
  struct split_commit open;
  if (BPF_CORE_READ(sb, s_dev) == fs_dev) SplitCommitEnd(FAST_COMMIT_KEY, &open);
  return 0;
}

SEC("tp_btf/jbd2_run_stats")
int BPF_PROG(commit_stats, dev_t dev, tid_t tid, struct transaction_run_stats_s* stats) {
  if (dev != fs_dev) return 0;
  struct explain_counters* c = Counters();
  if (!c) return 0;
  c->commit_stats++;
  c->blocks_logged += BPF_CORE_READ(stats, rs_blocks_logged);
  c->commit_running_j += BPF_CORE_READ(stats, rs_running);
  c->commit_locked_j += BPF_CORE_READ(stats, rs_locked);
  c->commit_flushing_j += BPF_CORE_READ(stats, rs_flushing);
  c->commit_logging_j += BPF_CORE_READ(stats, rs_logging);
  c->hz = CONFIG_HZ;
  return 0;
}

// ---- write and sync calls of writelab's threads, and their parts

// Set by user space to time only the threads in only_tids (the stream
// experiment's bystander probe), not every thread of writelab.
volatile __u32 filter_tids = 0;

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 16);
  __type(key, __u32);
  __type(value, __u8);
} only_tids SEC(".maps");

static __always_inline int Timed(long nr) {
  for (int i = 0; i < EXPLAIN_CALL_NRS; ++i)
    if (call_nrs[i] == nr) return 1;
  return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(call_enter, struct pt_regs* regs, long id) {
  const __u64 now = bpf_ktime_get_ns();  // before anything that may allocate
  if (!Ours() || !Timed(id)) return 0;
  __u32 tid = (__u32)bpf_get_current_pid_tgid();
  if (filter_tids && !bpf_map_lookup_elem(&only_tids, &tid)) return 0;
  if (SplitBegin(now)) __sync_fetch_and_add(&timed_in_flight, 1);
  return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(call_exit, struct pt_regs* regs, long ret) {
  if (!Ours()) return 0;
  const __u64 now = bpf_ktime_get_ns();
  __u64 ns = 0, parts[SPLIT_PARTS] = {}, during[SPLIT_OVERLAPS] = {};
  if (!SplitEnd(now, &ns, parts, during, 0)) return 0;
  __sync_fetch_and_add(&timed_in_flight, -1);
  struct explain_counters* c = Counters();
  if (!c) return 0;
  __u64 sum = 0;
  for (int i = 0; i < SPLIT_PARTS; ++i) {
    c->sync_part_ns[i] += parts[i];
    sum += parts[i];
  }
  for (int i = 0; i < SPLIT_OVERLAPS; ++i) c->sync_during_ns[i] += during[i];
  if (sum != ns) c->sync_unbalanced++;  // the parts are the call's, end to end
  c->syncs++;
  c->sync_ns += ns;
  Hist(c->sync_hist, ns);
  return 0;
}
