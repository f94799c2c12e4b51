// SPDX-License-Identifier: MIT
// The attribution figures --explain adds to a row (docs/explain.md): key,
// label, unit and what each includes, made from the counters' difference
// over what the row measured.
#pragma once

#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "explain/explainer.h"

namespace writelab {

inline constexpr FigureSpec kExplainFigures[] = {
    {"x_requests", "traced writes", "I/Os",
     "write requests issued to the target's device (block_rq_issue)"},
    {"x_queue_ms", "queue", "ms",
     "mean time a write request spent from its allocation (rq->start_time_ns) to its issue to "
     "the driver: btt's G2D, the queue part of Q2D (0 where the kernel keeps no start time)"},
    {"x_device_ms", "device", "ms",
     "mean time from issue to completion of a write request (btt's D2C)"},
    {"x_merges", "traced merges", "merges",
     "writes merged into a request: bio back and front merges and request merges "
     "(block_bio_backmerge, block_bio_frontmerge, block_rq_merge)"},
    {"x_back_merges", "back merges", "merges", "bios appended to a request (block_bio_backmerge)"},
    {"x_front_merges", "front merges", "merges",
     "bios prepended to a request (block_bio_frontmerge)"},
    {"x_kib_per_request", "KiB/request", "KiB", "bytes per issued write request"},
    {"x_calls", "traced calls", "calls",
     "write and sync system calls of writelab's threads (write, pwrite64, writev, pwritev, "
     "pwritev2, fsync, fdatasync, sync_file_range), sys_enter to sys_exit"},
    {"x_call_ms", "call", "ms", "mean traced call"},
    {"x_cpu_pct", "on CPU", "%",
     "share of the traced calls' time their threads ran on a CPU (sched_switch): the calls' "
     "own work, copies into the page cache, interrupts taken meanwhile"},
    {"x_runq_pct", "waiting for a CPU", "%",
     "share the threads were runnable but not running: from their wake-up (sched_wakeup) or "
     "preemption to their switch-in"},
    {"x_journal_pct", "journal commit", "%",
     "share the threads slept waiting for a journal commit or for journal space "
     "(jbd2_log_wait_commit, a locked transaction; xfs's log force): the stack at the sleep"},
    {"x_writeback_pct", "its writes", "%",
     "share the threads slept waiting for their data to reach the device: page writeback, "
     "buffers, direct I/O, a free request slot or blk-wbt"},
    {"x_flush_pct", "cache flush", "%",
     "share the threads slept waiting for a cache flush they issued (blkdev_issue_flush)"},
    {"x_dirty_wait_pct", "dirty throttling", "%", "share the threads slept in balance_dirty_pages"},
    {"x_other_pct", "other sleep", "%",
     "share the threads slept on anything else: locks, pipes, page faults, timers"},
    {"x_during_commit_pct", "while a commit ran", "%",
     "overlap, not cause: share of the calls' time during which a journal commit of the target "
     "file system ran, whatever the calls waited for"},
    {"x_during_flush_pct", "while a flush was in flight", "%",
     "overlap: share during which, with no commit running, a cache flush was in flight on the "
     "device, whoever issued it"},
    {"x_during_writes_pct", "while writes were in flight", "%",
     "overlap: share during which, with neither, a write request was in flight on the device"},
    {"x_unbalanced", "unbalanced", "calls",
     "traced calls whose parts did not add up to the call (a bug if not 0)"},
    {"x_commits", "commits", "commits",
     "journal commits started on the target file system, by anyone (jbd2_start_commit, and "
     "ext4_fc_commit_start for fast commits)"},
    {"x_blocks_logged_per_write", "logged/write", "blocks",
     "journal blocks logged (jbd2_run_stats) per write of the row"},
    {"x_commit_ms", "commit", "ms",
     "mean journal commit, running to logged (jbd2_run_stats: locked + flushing + logging)"},
    {"x_commit_running_ms", "commit: running", "ms",
     "mean time a committed transaction was open, taking changes (jbd2_run_stats rs_running)"},
    {"x_commit_locked_ms", "commit: locked", "ms",
     "mean time a commit waited for the transaction's last updates to finish (rs_locked)"},
    {"x_commit_flushing_ms", "commit: flushing", "ms",
     "mean time a commit spent submitting its ordered data (rs_flushing; the wait for that data "
     "falls in logging)"},
    {"x_commit_logging_ms", "commit: logging", "ms",
     "mean time a commit spent writing its log blocks and commit record (rs_logging)"},
    {"x_conversions", "conversions", "calls",
     "unwritten-to-written extent conversions on the target file system "
     "(ext4_ext_handle_unwritten_extents with EXT4_GET_BLOCKS_CONVERT)"},
    {"x_conversions_per_write", "conv/write", "calls", "conversions per write of the row"},
    {"x_throttled_s", "throttled", "s",
     "time writelab's writers were paused in balance_dirty_pages (its pause argument)"},
    {"x_throttled_pct", "throttled", "%", "throttled time as a share of the row's write time"},
    {"x_probe_call_ms", "probe call", "ms",
     "mean pwrite or fdatasync of the bystander probe (its calls only), sys_enter to sys_exit"},
    {"x_probe_cpu_pct", "probe: on CPU", "%", "as x_cpu_pct, for the probe's calls"},
    {"x_probe_runq_pct", "probe: waiting for a CPU", "%", "as x_runq_pct, for the probe's calls"},
    {"x_probe_journal_pct", "probe: journal commit", "%",
     "as x_journal_pct, for the probe's calls"},
    {"x_probe_writeback_pct", "probe: its writes", "%",
     "as x_writeback_pct, for the probe's calls"},
    {"x_probe_flush_pct", "probe: cache flush", "%", "as x_flush_pct, for the probe's calls"},
    {"x_probe_dirty_wait_pct", "probe: dirty throttling", "%",
     "as x_dirty_wait_pct, for the probe's calls"},
    {"x_probe_other_pct", "probe: other sleep", "%", "as x_other_pct, for the probe's calls"},
    {"x_probe_during_commit_pct", "probe: while a commit ran", "%",
     "overlap, as x_during_commit_pct, for the probe's calls"},
    {"x_probe_during_flush_pct", "probe: while a flush was in flight", "%",
     "overlap, as x_during_flush_pct, for the probe's calls"},
    {"x_probe_during_writes_pct", "probe: while writes were in flight", "%",
     "overlap, as x_during_writes_pct, for the probe's calls"},
    {"x_journal_thread_mb", "journal thread wrote", "MB",
     "write bios queued for the device by the target journal's own thread (journal_t's j_task, "
     "never a task merely named jbd2/...): its log and the data its commits carried, in 10^6 "
     "bytes"},
    {"x_commit_carried_mb", "commit carried", "MB",
     "bytes the file system's journal thread (jbd2) wrote to the device beyond the journal "
     "blocks it logged: with data=ordered, the dirty data of every writer whose data its "
     "commits had to write first, in 10^6 bytes"},
    {"x_own_writeback_mb", "own writeback", "MB",
     "write bios queued for the device by writelab's threads (sync_file_range, O_DIRECT, "
     "fsync: writeback the strategy started), in 10^6 bytes (block_bio_queue)"},
    {"x_other_writeback_mb", "flusher writeback", "MB",
     "write bios queued for the device by other tasks, chiefly the kernel's flusher threads, "
     "in 10^6 bytes"},
    {"x_ahead_mb", "queued during its calls", "MB",
     "write bios queued for the target's device while writelab's timed calls ran, by anyone "
     "(block_bio_queue), in 10^6 bytes: the writes its calls could wait behind"},
    {"x_ahead_background_pct", "queued: the background's", "%",
     "share of x_ahead_mb that was the background load's: its file's pages (whoever wrote them "
     "back: a flusher, the journal, its own sync) and its direct I/O"},
    {"x_ahead_self_pct", "queued: its own", "%",
     "share that was writelab's own: the measured file's pages and its direct I/O"},
    {"x_ahead_journal_pct", "queued: the journal's", "%",
     "share that was the target journal's own blocks (log, descriptors, commit record)"},
    {"x_ahead_metadata_pct", "queued: metadata", "%",
     "share that was other pages of the block device: file system metadata"},
    {"x_ahead_other_pct", "queued: others'", "%",
     "share that was anyone else's: other processes' files and direct I/O"},
    {"x_wbt_steps", "wbt steps", "events",
     "blk-wbt changed how many background writes it lets in flight on the device (wbt_step): "
     "0 means it never throttled"},
    {"x_wbt_lat_events", "wbt latency exceeded", "windows",
     "blk-wbt windows in which the device's reads or syncs waited past its target (wbt_lat)"},
};

// A figure of kExplainFigures by its key, checked when the program is compiled
// (KeyOf): what makes a row's figure names it this way.
consteval FigureKey ExplainKey(std::string_view key) { return KeyOf(kExplainFigures, key); }

// What the row measured, to relate the counters to.
struct ExplainBasis {
  uint64_t writes = 0;  // writes the row made
  double seconds = 0;   // the time the row's writes took
};

// The figures of the groups asked for that the explainer sees, into f.
void ExplainValues(const Explainer& e, const ExplainCounters& d, const ExplainBasis& basis,
                   std::initializer_list<ExplainProbe> groups, std::map<std::string, double>& f);

// The call split of the bystander probe's calls (the only ones timed, by
// Explainer::TimeOnly), into f as x_probe_*.
void ExplainProbeCallValues(const Explainer& e, const ExplainCounters& d,
                            std::map<std::string, double>& f);

// Whose writes were queued while the timed calls ran (Explainer::AheadOf
// named its files and the background's), into f as x_ahead_*; nothing when
// nothing was queued.
void ExplainAheadValues(const ExplainCounters& d, std::map<std::string, double>& f);

// "while its syncs ran, 1780.2 MB was queued to the disk: the background's
// (random writer) 97%, its own 2%, the journal's 1%", from a row's
// x_ahead_* figures; "" without them.
std::string WhoWasAhead(const Row& row, const std::string& background);

// Write requests per size (log2 buckets), as a series for the report.
Series RequestSizeSeries(const ExplainCounters& d);

// One note per group asked for that the kernel does not let writelab see.
std::vector<std::string> ExplainNotes(const Explainer& e,
                                      std::initializer_list<ExplainProbe> groups);

// The largest share of a row's call split ("92% cache flush"), of the
// bystander probe's calls when probe; "" without attribution.
std::string LargestWait(const Row& row, bool probe);

// "where the time went" for a row, one line ("" when the row has no
// attribution): the shares that add up to the measured time.
std::string WhereTheTimeWent(const Row& row);

}  // namespace writelab
