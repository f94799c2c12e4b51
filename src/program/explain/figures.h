// SPDX-License-Identifier: MIT
// The figures of `writelab explain -- CMD`: per call type, per file and per
// slow call (docs/explain.md, "Explaining your own program").
#pragma once

#include <linux/types.h>  // split_parts.h's types, in user space

#include <string_view>

#include "core/result.h"
#include "explain/split_parts.h"

namespace writelab {

// A row per type of call (and per file: the same figures).
inline constexpr FigureSpec kProgramFigures[] = {
    {"calls", "calls", "calls", "calls of this type that the scope made"},
    {"mb", "bytes", "MB", "bytes the calls returned as written, in 10^6 bytes"},
    {"time_s", "time", "s", "the calls' time added up, sys_enter to sys_exit"},
    {"mean_ms", "mean", "ms", "mean call time"},
    {"p50_ms", "p50", "ms",
     "median call time (from the kernel's histogram: at most 1/16 above the true value)"},
    {"p99_ms", "p99", "ms", "99th percentile call time (same histogram)"},
    {"max_ms", "max", "ms", "the longest call, exact"},
    {"cpu_pct", "on CPU", "%",
     "share of the calls' time their threads ran on a CPU: the calls' own work, copies into "
     "the page cache, interrupts on that CPU"},
    {"runq_pct", "waiting for a CPU", "%",
     "share they were runnable but not running: from a wake-up or a preemption to the switch-in"},
    {"journal_pct", "journal commit", "%",
     "share they slept waiting for a journal commit or journal space (jbd2_log_wait_commit, a "
     "locked transaction; xfs's log force), by the kernel stack at the sleep"},
    {"writeback_pct", "its writes", "%",
     "share they slept waiting for their data to reach the disk: page writeback, buffers, "
     "direct I/O, a free request slot or blk-wbt"},
    {"flush_pct", "cache flush", "%",
     "share they slept waiting for a cache flush they issued (blkdev_issue_flush)"},
    {"throttled_pct", "dirty throttling", "%", "share they slept in balance_dirty_pages"},
    {"other_pct", "other sleep", "%",
     "share they slept on anything else: locks, pipes, page faults, timers"},
    {"lock_pct", "of which lock waits", "%",
     "of other sleep, the share they slept waiting for a contended kernel lock (a "
     "rw_semaphore or mutex: lock:contention_begin to contention_end)"},
    {"during_commit_pct", "while a commit ran", "%",
     "overlap, not cause: share of the calls' time during which a journal commit of the "
     "scope's file systems ran, whatever they waited for"},
    {"during_flush_pct", "while a flush was in flight", "%",
     "overlap: share during which, with no commit, a cache flush was in flight on the disks, "
     "whoever issued it"},
    {"during_writes_pct", "while writes were in flight", "%",
     "overlap: share during which, with neither, a write request was in flight on the disks"},
    {"commits_per_call", "commits per call", "commits",
     "journal commits that started on the file system during a call, per call"},
    {"conversions_per_call", "conversions per call", "conversions",
     "unwritten-to-written extent conversions during a call, per call"},
    {"errors", "errors", "calls", "calls that returned an error"},
};

// A row per slow call: the call, and what happened around it.
inline constexpr FigureSpec kSlowCallFigures[] = {
    {"at_s", "at", "s", "when the call began, from the start of the run"},
    {"ms", "took", "ms", "the call's time, sys_enter to sys_exit"},
    {"cpu_pct", "on CPU", "%",
     "share of the call's time its thread ran on a CPU: the call's own work, copies into "
     "the page cache, interrupts on that CPU"},
    {"runq_pct", "waiting for a CPU", "%",
     "share it were runnable but not running: from a wake-up or a preemption to the switch-in"},
    {"journal_pct", "journal commit", "%",
     "share it slept waiting for a journal commit or journal space (jbd2_log_wait_commit, a "
     "locked transaction; xfs's log force), by the kernel stack at the sleep"},
    {"writeback_pct", "its writes", "%",
     "share it slept waiting for its data to reach the disk: page writeback, buffers, "
     "direct I/O, a free request slot or blk-wbt"},
    {"flush_pct", "cache flush", "%",
     "share it slept waiting for a cache flush it issued (blkdev_issue_flush)"},
    {"throttled_pct", "dirty throttling", "%", "share it slept in balance_dirty_pages"},
    {"other_pct", "other sleep", "%",
     "share it slept on anything else: locks, pipes, page faults, timers"},
    {"lock_pct", "of which lock waits", "%",
     "of other sleep, the share it slept waiting for a contended kernel lock (a rw_semaphore "
     "or mutex: lock:contention_begin to contention_end)"},
    {"during_commit_pct", "while a commit ran", "%",
     "overlap, not cause: share of the call's time during which a journal commit of the "
     "scope's file systems ran, whatever it waited for"},
    {"during_flush_pct", "while a flush was in flight", "%",
     "overlap: share during which, with no commit, a cache flush was in flight on the disks, "
     "whoever issued it"},
    {"during_writes_pct", "while writes were in flight", "%",
     "overlap: share during which, with neither, a write request was in flight on the disks"},
    {"commits", "commits", "commits", "journal commits that started during the call"},
    {"commit_ms", "commit took", "ms", "the longest commit that overlapped the call"},
    {"commit_blocks", "blocks logged", "blocks",
     "journal blocks those commits logged (jbd2_run_stats)"},
    {"commit_running_ms", "commit: running", "ms",
     "the longest commit's transaction: time it was open, taking changes, before its commit "
     "began (jbd2_run_stats rs_running; in jiffies, so a multiple of 1000/HZ ms)"},
    {"commit_locked_ms", "commit: locked", "ms",
     "the longest commit: time it waited for the transaction's last updates (rs_locked)"},
    {"commit_flushing_ms", "commit: flushing", "ms",
     "the longest commit: time it spent submitting its ordered data (rs_flushing; the wait for "
     "that data falls in logging)"},
    {"commit_logging_ms", "commit: logging", "ms",
     "the longest commit: time it spent writing its log blocks and commit record (rs_logging)"},
    {"commit_carried_mb", "commit carried", "MB",
     "what the journal thread wrote during those commits beyond its log blocks: data of other "
     "writers its commits wrote first, in 10^6 bytes"},
    {"dirty_mb", "Dirty", "MB", "system-wide Dirty in /proc/meminfo when the call ended"},
    {"writeback_mb", "Writeback", "MB", "system-wide Writeback when the call ended"},
    {"in_flight", "disk queue", "requests", "requests in flight on the file's disk when it ended"},
    {"charged_pct", "charged", "%",
     "share of the call's blocked time (asleep for a commit, its writes, a flush, throttling or "
     "other) charged to a process or named cause (docs/explain.md, \"Who made it wait\")"},
};

// A row per culprit: who made the calls wait (blame.h).
inline constexpr FigureSpec kCulpritFigures[] = {
    {"waited_ms", "charged", "ms",
     "the blocked time of the delivered calls (durability calls and calls above --slow) "
     "charged to it, in proportion to its bytes in the commits, flushes and queues they waited "
     "on; a lock's holder, the calls' waits for the locks it held"},
    {"share_pct", "share", "%", "of all the delivered calls' blocked time"},
    {"calls", "calls made to wait", "calls", "delivered calls with time charged to it"},
    {"written_mb", "wrote", "MB",
     "bytes queued to the watched disks for it over the run: its page cache pages written back "
     "(by whichever thread) and its direct I/O, in 10^6 bytes"},
    {"dirtied_mb", "dirtied", "MB",
     "page cache it dirtied on the watched file systems over the run, in 10^6 bytes"},
};

consteval FigureKey ProgramKey(std::string_view key) { return KeyOf(kProgramFigures, key); }
consteval FigureKey SlowCallKey(std::string_view key) { return KeyOf(kSlowCallFigures, key); }
consteval FigureKey CulpritKey(std::string_view key) { return KeyOf(kCulpritFigures, key); }

// The keys of the split's parts and overlaps, in split_parts.h's order.
constexpr FigureKey kPartKeys[SPLIT_PARTS] = {
    ProgramKey("cpu_pct"),       ProgramKey("runq_pct"),  ProgramKey("journal_pct"),
    ProgramKey("writeback_pct"), ProgramKey("flush_pct"), ProgramKey("throttled_pct"),
    ProgramKey("other_pct")};
constexpr FigureKey kDuringKeys[SPLIT_OVERLAPS] = {ProgramKey("during_commit_pct"),
                                                   ProgramKey("during_flush_pct"),
                                                   ProgramKey("during_writes_pct")};

}  // namespace writelab
