// SPDX-License-Identifier: MIT
// The kernel functions a sleeping thread is classified by (split_parts.h):
// a thread that goes to sleep with one of them on its stack, innermost
// first, sleeps for that function's part. Their address ranges come from
// /proc/kallsyms (root sees the addresses) and are handed to the BPF
// programs before they load (split.bpf.h's wait_lo, wait_hi, wait_part).
#pragma once

#include <linux/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "explain/split_parts.h"

namespace writelab {

struct WaitFunction {
  std::string_view name;
  uint8_t part;  // SPLIT_*
};

// The table, and why each is there: docs/explain.md, "The split".
inline constexpr WaitFunction kWaitFunctions[] = {
    // A commit of the journal: waiting for one (fsync, O_SYNC), for its
    // transaction to unlock, or for journal space.
    {"jbd2_log_wait_commit", SPLIT_JOURNAL},
    {"wait_transaction_locked", SPLIT_JOURNAL},
    {"wait_transaction_switching", SPLIT_JOURNAL},
    {"add_transaction_credits", SPLIT_JOURNAL},
    {"__jbd2_log_wait_for_space", SPLIT_JOURNAL},
    {"jbd2_journal_wait_updates", SPLIT_JOURNAL},
    // A metadata buffer the journal holds, which the call must change: its
    // commit writing it (a shadow copy), or the buffer locked under that I/O.
    {"do_get_write_access", SPLIT_JOURNAL},
    {"xlog_wait_on_iclog", SPLIT_JOURNAL},
    {"xfs_log_force_seq", SPLIT_JOURNAL},
    {"xfs_log_force", SPLIT_JOURNAL},
    {"btrfs_wait_for_commit", SPLIT_JOURNAL},
    {"wait_current_trans", SPLIT_JOURNAL},
    // A cache flush the thread issued and waits for.
    {"blkdev_issue_flush", SPLIT_FLUSH},
    // Its data on its way to the disk: pages under writeback, buffers,
    // direct I/O, the flusher's work (sync, syncfs), a request slot or
    // blk-wbt's permission to queue a write.
    {"folio_wait_writeback", SPLIT_WRITEBACK},
    {"folio_wait_stable", SPLIT_WRITEBACK},
    {"wait_on_page_writeback", SPLIT_WRITEBACK},
    {"__filemap_fdatawait_range", SPLIT_WRITEBACK},
    {"__wait_on_buffer", SPLIT_WRITEBACK},
    {"__sync_dirty_buffer", SPLIT_WRITEBACK},
    {"fsync_buffers_list", SPLIT_WRITEBACK},
    {"__lock_buffer", SPLIT_WRITEBACK},
    {"__iomap_dio_rw", SPLIT_WRITEBACK},
    {"__blkdev_direct_IO_simple", SPLIT_WRITEBACK},
    {"__blkdev_direct_IO", SPLIT_WRITEBACK},
    {"blkdev_direct_IO", SPLIT_WRITEBACK},
    {"btrfs_wait_ordered_range", SPLIT_WRITEBACK},
    {"wb_wait_for_completion", SPLIT_WRITEBACK},
    {"blk_mq_get_tag", SPLIT_WRITEBACK},
    {"rq_qos_wait", SPLIT_WRITEBACK},
    // Dirty throttling.
    {"balance_dirty_pages", SPLIT_THROTTLE},
};

struct WaitRange {
  uint64_t lo = 0, hi = 0;  // [lo, hi): the function's text
  uint8_t part = 0;
  std::string name;
};

// The ranges of the functions of kWaitFunctions found in a kallsyms text
// ("ADDRESS TYPE NAME [MODULE]" a line), sorted by start: a function
// ends where the next text symbol begins. A name found several times (a
// static function of two modules) gives a range each; at most
// SPLIT_WAIT_FNS. Addresses of 0 (kallsyms hidden from this user) give none.
std::vector<WaitRange> WaitRangesFrom(std::string_view kallsyms);

// The same from /proc/kallsyms; empty when it cannot be read.
std::vector<WaitRange> WaitRanges();

// Fills a BPF skeleton's read-only data (split.bpf.h's wait_*) with ranges.
template <class Rodata>
void SetWaitRanges(Rodata* rodata, const std::vector<WaitRange>& ranges) {
  uint32_t n = 0;
  for (const WaitRange& r : ranges) {
    if (n >= SPLIT_WAIT_FNS) break;
    rodata->wait_lo[n] = r.lo;
    rodata->wait_hi[n] = r.hi;
    rodata->wait_part[n] = r.part;
    ++n;
  }
  rodata->wait_fns = n;
}

// The parts' and overlaps' short keys, in split_parts.h's order (CSV
// columns: "cpu_ns", "during_commit_ns"...).
inline constexpr const char* kSplitPartKeys[SPLIT_PARTS] = {
    "cpu", "runq", "journal", "writeback", "flush", "throttled", "other"};
inline constexpr const char* kSplitOverlapKeys[SPLIT_OVERLAPS] = {"during_commit", "during_flush",
                                                                  "during_writes"};

// Said when WaitRanges() found none: the parts are then on CPU, waiting for
// a CPU and other sleep only.
inline constexpr const char* kNoWaitFunctions =
    "the kernel's symbols (/proc/kallsyms) named none of the functions a sleep is classified "
    "by: every sleep is counted as other sleep";

// The part's name in the figures: "on CPU", "waiting for a CPU",
// "journal commit"...; and the overlap's: "while a commit ran"...
const char* SplitPartName(int part);
const char* SplitOverlapName(int overlap);

}  // namespace writelab
