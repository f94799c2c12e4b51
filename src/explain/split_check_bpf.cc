// SPDX-License-Identifier: MIT
// ReadSplitCheck with libbpf: the state's counts beside what the maps hold.
#include <bpf/libbpf.h>

#include "explain/split_check.h"

namespace writelab {

SplitSelfCheck ReadSplitCheck(const bpf_map* state, const bpf_map* rqs, const bpf_map* commits,
                              uint64_t now_ns) {
  SplitSelfCheck out;
  __u32 zero = 0;
  split_state s{};
  if (bpf_map__lookup_elem(state, &zero, sizeof zero, &s, sizeof s, 0) != 0) return out;
  out.read = true;
  out.check = s.check;
  for (int i = 0; i < SPLIT_OVERLAPS; ++i) out.counts[i] = s.counts[i];
  __u64 key = 0, next = 0;
  const __u64* prev = nullptr;
  while (bpf_map__get_next_key(rqs, prev, &next, sizeof next) == 0) {
    split_rq rq{};
    if (bpf_map__lookup_elem(rqs, &next, sizeof next, &rq, sizeof rq, 0) == 0 &&
        rq.during < SPLIT_OVERLAPS) {
      ++out.held[rq.during];
      if (now_ns > rq.issue_ns && now_ns - rq.issue_ns >= SPLIT_RQ_LOST_NS) ++out.stale;
    }
    key = next;
    prev = &key;
  }
  __u32 ckey = 0, cnext = 0;
  const __u32* cprev = nullptr;
  while (bpf_map__get_next_key(commits, cprev, &cnext, sizeof cnext) == 0) {
    ++out.held[SPLIT_DURING_COMMIT];
    ckey = cnext;
    cprev = &ckey;
  }
  return out;
}

}  // namespace writelab
