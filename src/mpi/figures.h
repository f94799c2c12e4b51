// SPDX-License-Identifier: MIT
// The figures of an aggregate row under MPI (docs/mpi.md): one row for all
// ranks, per row of the experiment. Throughput counts as IOR does; latencies
// come from the ranks' histograms merged bucket by bucket.
#pragma once

#include <string_view>

#include "core/result.h"

namespace writelab {

inline constexpr FigureSpec kRanksFigures[] = {
    {"ranks", "ranks", "ranks", "ranks that measured the row in the trial"},
    {"mb_s", "MB/s all ranks", "MB/s",
     "every rank's bytes over the wall time from the first rank's start to the last rank's "
     "finish, on rank 0's clock (IOR's aggregate; not the sum of the ranks' rates); each "
     "rank's start and finish are those of its own row's MB/s"},
    {"lines_s", "lines/s all ranks", "lines/s",
     "every rank's lines over the wall time from the first rank's start to the last finish"},
    {"commits_s", "commits/s all ranks", "commits/s",
     "every rank's commits over the wall time from the first rank's start to the last finish"},
    {"rank_mb_s_min", "MB/s slowest rank", "MB/s", "the slowest rank's bytes over its own time"},
    {"rank_mb_s_max", "MB/s fastest rank", "MB/s", "the fastest rank's bytes over its own time"},
    {"bg_mb_s", "background MB/s", "MB/s",
     "fsync --roles: the background ranks' bytes over their time, while the others measured"},
    {"seconds", "wall time", "s", "the first rank's start to the last rank's finish"},
    {"start_skew_ms", "start skew", "ms",
     "the last rank's start minus the first's: how together the trial began (the barrier's "
     "release and the clock check's error)"},
    {"end_skew_ms", "finish skew", "ms", "the last rank's finish minus the first's: stragglers"},
    {"bytes", "written", "bytes", "by all ranks"},
    {"write_p50_ms", "write p50", "ms", "median write call, over all ranks' calls"},
    {"write_p99_ms", "write p99", "ms", "99th percentile write call, over all ranks' calls"},
    {"write_max_ms", "write max", "ms", "slowest write call of any rank"},
    {"probe_p50_ms", "probe p50", "ms", "bystander probe, median over all ranks' probes"},
    {"probe_p99_ms", "probe p99", "ms", "bystander probe, 99th percentile over all ranks"},
    {"probe_max_ms", "probe max", "ms", "slowest bystander probe of any rank"},
    {"sync_p50_ms", "sync p50", "ms", "median sync call, over all measuring ranks"},
    {"sync_p99_ms", "sync p99", "ms", "99th percentile sync call, over all measuring ranks"},
    {"sync_max_ms", "sync max", "ms", "slowest sync call of any rank"},
    {"total_p50_ms", "write+sync p50", "ms", "median iteration, over all measuring ranks"},
    {"total_p99_ms", "write+sync p99", "ms", "99th percentile iteration, over all measuring ranks"},
    {"total_max_ms", "write+sync max", "ms", "slowest iteration of any rank"},
    {"commit_p50_ms", "commit p50", "ms", "median commit, over all ranks' threads"},
    {"commit_p99_ms", "commit p99", "ms", "99th percentile commit, over all ranks' threads"},
    {"commit_max_ms", "commit max", "ms", "slowest commit of any rank"},
};

// A figure of kRanksFigures by its key, checked when the program is compiled
// (KeyOf): what makes a row's figure names it this way.
consteval FigureKey RanksKey(std::string_view key) { return KeyOf(kRanksFigures, key); }

}  // namespace writelab
