// SPDX-License-Identifier: MIT
#include "explain/split_check.h"

#include <fmt/format.h>

namespace writelab {

bool SplitSelfCheck::Balanced() const {
  for (int i = 0; i < SPLIT_OVERLAPS; ++i)
    if (counts[i] < 0 || static_cast<uint64_t>(counts[i]) != held[i]) return false;
  return true;
}

std::vector<std::string> SplitCheckNotes(const SplitSelfCheck& c, bool only_problems) {
  if (!c.read) return {"self-check: the state of the overlaps could not be read"};
  std::vector<std::string> out;
  const split_check& k = c.check;
  const uint64_t lost = k.rq_lost + c.stale + k.commits_unended;
  if (!c.Balanced())
    out.push_back(fmt::format(
        "self-check FAILED: the overlaps counted {} commits, {} flushes and {} writes in "
        "flight, the maps held {}, {} and {}: the overlap figures (during_*) are not to be "
        "trusted",
        c.counts[SPLIT_DURING_COMMIT], c.counts[SPLIT_DURING_FLUSH], c.counts[SPLIT_DURING_WRITES],
        c.held[SPLIT_DURING_COMMIT], c.held[SPLIT_DURING_FLUSH], c.held[SPLIT_DURING_WRITES]));
  if (lost)
    out.push_back(fmt::format(
        "self-check: {} requests never reported done (dropped from in flight after 30 s), {} "
        "still in flight after 30 s, {} commits whose end was never seen: the overlap figures "
        "(during_*) count each for up to 30 s",
        k.rq_lost, c.stale, k.commits_unended));
  if (k.rq_found_ended)
    out.push_back(fmt::format(
        "self-check: {} requests had ended with none of the programs seeing their completion "
        "or requeue: a sweep (at most every {} ms, while requests overlap) found each, and the "
        "overlap figures (during_*) count it in flight until then",
        k.rq_found_ended, SPLIT_RQ_SWEEP_NS / 1000000));
  if (k.rq_untracked)
    out.push_back(fmt::format(
        "self-check: {} requests were not counted in flight ({} already were): the overlap "
        "figures (during_*) miss them",
        k.rq_untracked, SPLIT_RQS));
  if (k.stack_misses)
    out.push_back(
        fmt::format("{} sleeps whose kernel stack could not be read are counted as other sleep",
                    k.stack_misses));
  if (k.wakeups_missed > k.wakeups_unrecovered)
    out.push_back(fmt::format(
        "{} wakeups ran none of the split's programs (their threads were switched in "
        "while the split still had them asleep): the {:.3f} ms their threads then waited for a "
        "CPU, read from the scheduler's own count (sched_info.run_delay), is counted as "
        "waiting for a CPU",
        k.wakeups_missed - k.wakeups_unrecovered, static_cast<double>(k.missed_runq_ns) / 1e6));
  if (k.wakeups_unrecovered)
    out.push_back(fmt::format(
        "{} wakeups ran none of the split's programs (their threads were switched in "
        "while the split still had them asleep), on a kernel that keeps no count of a thread's "
        "waits for a CPU (CONFIG_SCHED_INFO): those threads' waits for a CPU after them are "
        "counted in their sleep's part",
        k.wakeups_unrecovered));
  // The balance said whenever it held, beside what else the check found.
  if (!only_problems && c.Balanced() && !lost) {
    const uint64_t left =
        c.held[SPLIT_DURING_COMMIT] + c.held[SPLIT_DURING_FLUSH] + c.held[SPLIT_DURING_WRITES];
    out.insert(
        out.begin(),
        fmt::format(
            "self-check: {} ({} requests requeued by the driver, {} issued again and {} inserted "
            "again, each counted once)",
            left ? fmt::format(
                       "every request and commit seen in flight ended or was still in flight "
                       "when the tracing stopped ({})",
                       left)
                 : "every request and commit seen in flight ended",
            k.rq_requeued, k.rq_reissued, k.rq_reinserted));
  }
  return out;
}

}  // namespace writelab
