// SPDX-License-Identifier: MIT
// --explain with libbpf: the skeleton of explain.bpf.c, loaded with only the
// programs whose kernel points exist, each group attached or reported
// missing with its reason.
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string_view>

#include "explain.skel.h"
#include "explain/explainer.h"
#include "explain/kernel_dev.h"
#include "explain/split_check.h"
#include "explain/wait_functions.h"

namespace writelab {
namespace {

// Which group a program belongs to, by its name in explain.bpf.c.
ExplainProbe GroupOf(std::string_view prog) {
  if (prog.starts_with("rq_") || prog.starts_with("bio_") || prog == "split_rq_insert")
    return ExplainProbe::kBlock;
  if (prog == "throttle") return ExplainProbe::kThrottle;
  if (prog == "wb_queue") return ExplainProbe::kWriteback;
  if (prog.starts_with("wbt_")) return ExplainProbe::kWbt;
  if (prog == "conversion") return ExplainProbe::kConversions;
  if (prog.starts_with("commit_") || prog.starts_with("fc_")) return ExplainProbe::kJournal;
  return ExplainProbe::kSyncParts;  // call_enter, call_exit, split_switch, split_wakeup
}

// The system calls whose time is split (explain.bpf.c's call_nrs).
constexpr long kTimedCalls[] = {SYS_write,    SYS_pwrite64, SYS_writev,    SYS_pwritev,
                                SYS_pwritev2, SYS_fsync,    SYS_fdatasync, SYS_sync_file_range};
static_assert(std::size(kTimedCalls) == EXPLAIN_CALL_NRS);

// Why the kernel cannot run a program of section sec ("" when it can).
std::string MissingPoint(const btf* vmlinux, std::string_view sec) {
  const size_t slash = sec.find('/');
  const std::string kind(sec.substr(0, slash)), point(sec.substr(slash + 1));
  if (kind == "tp_btf") {
    if (btf__find_by_name_kind(vmlinux, ("btf_trace_" + point).c_str(), BTF_KIND_TYPEDEF) < 0)
      return "the kernel has no tracepoint " + point;
    return "";
  }
  if (btf__find_by_name_kind(vmlinux, point.c_str(), BTF_KIND_FUNC) < 0)
    return "the kernel has no function " + point + " (inlined or absent)";
  return "";
}

// balance_dirty_pages's arguments as explain.bpf.c reads them: nine, the
// seventh (pause, in jiffies) a long.
std::string ThrottleSignature(const btf* vmlinux) {
  const int id = btf__find_by_name_kind(vmlinux, "btf_trace_balance_dirty_pages", BTF_KIND_TYPEDEF);
  const btf_type* t = id < 0 ? nullptr : btf__type_by_id(vmlinux, id);
  if (t) t = btf__type_by_id(vmlinux, t->type);                   // pointer
  if (t && btf_is_ptr(t)) t = btf__type_by_id(vmlinux, t->type);  // func proto
  if (!t || !btf_is_func_proto(t) || btf_vlen(t) != 9)
    return "balance_dirty_pages has other arguments on this kernel";
  const btf_type* pause = btf__type_by_id(vmlinux, btf_params(t)[7].type);
  if (!pause || std::string_view(btf__name_by_offset(vmlinux, pause->name_off)) != "long int")
    return "balance_dirty_pages has other arguments on this kernel";
  return "";
}

// Empties a hash map: entries left by calls that were in flight when the
// programs were last detached.
void Clear(bpf_map* map) {
  __u64 key = 0;
  while (bpf_map__get_next_key(map, nullptr, &key, bpf_map__key_size(map)) == 0)
    if (bpf_map__delete_elem(map, &key, bpf_map__key_size(map), 0) != 0) break;
}

// Makes map the set of tids (its filter flag says whether to use it).
void OnlyThreads(bpf_map* map, const std::vector<pid_t>& tids) {
  Clear(map);
  for (pid_t t : tids) {
    __u32 key = static_cast<__u32>(t);
    __u8 one = 1;
    bpf_map__update_elem(map, &key, sizeof key, &one, sizeof one, BPF_ANY);
  }
}

uint64_t NowNs() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(now.tv_nsec);
}

class BpfExplainer final : public Explainer {
 public:
  ~BpfExplainer() override {
    Detach();
    explain_bpf__destroy(skel_);
  }
  void Attach(std::initializer_list<ExplainProbe> groups) override;
  void TimeOnly(const std::vector<pid_t>& tids) override {
    OnlyThreads(skel_->maps.only_tids, tids);
    skel_->bss->filter_tids = !tids.empty();
  }
  void ThrottleOnly(const std::vector<pid_t>& tids) override {
    OnlyThreads(skel_->maps.writer_tids, tids);
    skel_->bss->filter_writers = !tids.empty();
  }
  void AheadOf(const std::vector<std::pair<dev_t, ino_t>>& own,
               const std::vector<std::pair<dev_t, ino_t>>& background,
               const std::vector<pid_t>& background_pids) override;
  void Detach() override {
    for (bpf_link* l : links_) bpf_link__destroy(l);
    links_.clear();
  }
  ExplainCounters Read() const override;
  std::vector<std::string> CheckNotes() const override {
    std::vector<std::string> notes =
        SplitCheckNotes(ReadSplitCheck(skel_->maps.split_state, skel_->maps.split_rqs,
                                       skel_->maps.split_commits, NowNs()),
                        true);
    if (waits_.empty()) notes.push_back(kNoWaitFunctions);
    return notes;
  }
  std::string Missing(ExplainProbe p) const override { return missing_[static_cast<size_t>(p)]; }
  uint32_t fs_block_size() const override { return fs_block_size_; }
  Status Open(const ExplainScope& scope);

 private:
  int TryLoad(const ExplainScope& scope);
  void Miss(ExplainProbe p, std::string why) {
    auto& m = missing_[static_cast<size_t>(p)];
    if (m.empty()) m = std::move(why);
  }
  explain_bpf* skel_ = nullptr;
  std::vector<bpf_link*> links_;
  std::array<std::string, kExplainProbes> missing_;
  uint32_t fs_block_size_ = 0;
  split_check check_base_{};  // the checks of the spans before the last Attach
  std::vector<WaitRange> waits_;
};

ExplainCounters BpfExplainer::Read() const {
  const int cpus = libbpf_num_possible_cpus();
  std::vector<ExplainCounters> per(static_cast<size_t>(cpus > 0 ? cpus : 1));
  __u32 zero = 0;
  ExplainCounters sum{};
  if (bpf_map__lookup_elem(skel_->maps.counters, &zero, sizeof zero, per.data(),
                           per.size() * sizeof(ExplainCounters), 0) != 0)
    return sum;
  for (const ExplainCounters& c : per) {
    const __u64 hz = std::max(sum.hz, c.hz);
    sum = ExplainDelta(sum, ExplainDelta(ExplainCounters{}, c));  // sum += c
    sum.hz = hz;
  }
  split_state st{};
  bpf_map__lookup_elem(skel_->maps.split_state, &zero, sizeof zero, &st, sizeof st, 0);
  sum.rq_requeued = check_base_.rq_requeued + st.check.rq_requeued;
  sum.rq_reissued = check_base_.rq_reissued + st.check.rq_reissued;
  sum.rq_reinserted = check_base_.rq_reinserted + st.check.rq_reinserted;
  sum.rq_lost = check_base_.rq_lost + st.check.rq_lost;
  sum.commits_unended = check_base_.commits_unended + st.check.commits_unended;
  sum.stack_misses = check_base_.stack_misses + st.check.stack_misses;
  sum.wakeups_missed = check_base_.wakeups_missed + st.check.wakeups_missed;
  sum.missed_runq_ns = check_base_.missed_runq_ns + st.check.missed_runq_ns;
  sum.wakeups_unrecovered = check_base_.wakeups_unrecovered + st.check.wakeups_unrecovered;
  sum.rq_found_ended = check_base_.rq_found_ended + st.check.rq_found_ended;
  sum.rq_untracked = check_base_.rq_untracked + st.check.rq_untracked;
  return sum;
}

void BpfExplainer::AheadOf(const std::vector<std::pair<dev_t, ino_t>>& own,
                           const std::vector<std::pair<dev_t, ino_t>>& background,
                           const std::vector<pid_t>& background_pids) {
  bpf_map* files = skel_->maps.ahead_files;
  ahead_file key{};
  while (bpf_map__get_next_key(files, nullptr, &key, sizeof key) == 0)
    if (bpf_map__delete_elem(files, &key, sizeof key, 0) != 0) break;
  auto add = [&](const std::pair<dev_t, ino_t>& f, __u8 who) {
    ahead_file k{KernelDev(f.first), 0, static_cast<__u64>(f.second)};
    bpf_map__update_elem(files, &k, sizeof k, &who, sizeof who, BPF_ANY);
  };
  for (const auto& f : own) add(f, EXPLAIN_AHEAD_SELF);
  for (const auto& f : background) add(f, EXPLAIN_AHEAD_BACKGROUND);
  Clear(skel_->maps.ahead_tgids);
  for (pid_t p : background_pids) {
    __u32 k = static_cast<__u32>(p);
    __u8 who = EXPLAIN_AHEAD_BACKGROUND;
    bpf_map__update_elem(skel_->maps.ahead_tgids, &k, sizeof k, &who, sizeof who, BPF_ANY);
  }
}

void BpfExplainer::Attach(std::initializer_list<ExplainProbe> groups) {
  std::array<bool, kExplainProbes> wanted{};
  for (ExplainProbe g : groups) {
    wanted[static_cast<size_t>(g)] = true;
    if (g == ExplainProbe::kSyncParts)  // the parts follow the device and the journal
      wanted[static_cast<size_t>(ExplainProbe::kBlock)] =
          wanted[static_cast<size_t>(ExplainProbe::kJournal)] = true;
  }
  // What was in flight when the programs were last detached may have ended
  // unseen since: the state starts empty, its check kept.
  __u32 zero = 0;
  split_state st{};
  if (bpf_map__lookup_elem(skel_->maps.split_state, &zero, sizeof zero, &st, sizeof st, 0) == 0) {
    const __u64* from = &st.check.rq_requeued;
    __u64* to = &check_base_.rq_requeued;
    for (size_t i = 0; i < sizeof(split_check) / sizeof(__u64); ++i) to[i] += from[i];
  }
  Clear(skel_->maps.split_rqs);
  Clear(skel_->maps.split_commits);
  skel_->bss->timed_in_flight = 0;
  split_state idle{};
  idle.last_ns = NowNs();
  bpf_map__update_elem(skel_->maps.split_state, &zero, sizeof zero, &idle, sizeof idle, BPF_ANY);
  bpf_program* prog;
  bpf_object__for_each_program(prog, skel_->obj) {
    const ExplainProbe g = GroupOf(bpf_program__name(prog));
    if (!Sees(g) || !wanted[static_cast<size_t>(g)]) continue;
    bpf_link* link = bpf_program__attach(prog);
    if (!link) {
      Miss(g,
           std::string("attach ") + bpf_program__section_name(prog) + ": " + std::strerror(errno));
      continue;
    }
    links_.push_back(link);
  }
}

// libbpf's warnings of the load in progress, kept rather than printed: a
// program the kernel refuses costs its group, not the run, and its
// verifier log is shown only when the load fails for good.
std::string g_libbpf_log;

int KeepLibbpfLog(libbpf_print_level level, const char* fmt, va_list args) {
  if (level != LIBBPF_WARN) return 0;
  char line[1024];
  const int n = std::vsnprintf(line, sizeof line, fmt, args);
  if (n > 0) g_libbpf_log.append(line, std::min<size_t>(static_cast<size_t>(n), sizeof line - 1));
  return n;
}

// The program a failed load names: "prog 'NAME': ... load failed".
std::string FailedProgram(const std::string& log) {
  const size_t at = log.rfind("load failed");
  const size_t open = at == std::string::npos ? at : log.rfind("prog '", at);
  if (open == std::string::npos) return "";
  const size_t close = log.find('\'', open + 6);
  return close == std::string::npos ? "" : log.substr(open + 6, close - open - 6);
}

// Opens the skeleton with the filters set and only the programs of the
// groups still seen; then loads it.
int BpfExplainer::TryLoad(const ExplainScope& scope) {
  explain_bpf__destroy(skel_);
  skel_ = explain_bpf__open();
  if (!skel_) return -errno;
  skel_->rodata->target_tgid = static_cast<__u32>(scope.tgid);
  skel_->rodata->fs_dev = KernelDev(scope.fs_dev);
  for (size_t i = 0; i < std::size(kTimedCalls); ++i) skel_->rodata->call_nrs[i] = kTimedCalls[i];
  SetWaitRanges(skel_->rodata, waits_);
  bpf_program* prog;
  bpf_object__for_each_program(prog, skel_->obj) {
    if (!Sees(GroupOf(bpf_program__name(prog)))) bpf_program__set_autoload(prog, false);
  }
  g_libbpf_log.clear();
  return explain_bpf__load(skel_);
}

Status BpfExplainer::Open(const ExplainScope& scope) {
  fs_block_size_ = scope.fs_block_size;
  waits_ = WaitRanges();
  btf* vmlinux = btf__load_vmlinux_btf();
  if (!vmlinux) return Unexpected(ErrnoError(errno, "--explain: read the kernel's BTF"));
  skel_ = explain_bpf__open();
  if (!skel_) {
    btf__free(vmlinux);
    return Unexpected(ErrnoError(errno, "--explain: open the BPF programs"));
  }
  bpf_program* prog;
  bpf_object__for_each_program(prog, skel_->obj) {
    const ExplainProbe g = GroupOf(bpf_program__name(prog));
    std::string why = MissingPoint(vmlinux, bpf_program__section_name(prog));
    if (why.empty() && g == ExplainProbe::kThrottle) why = ThrottleSignature(vmlinux);
    if (!why.empty()) Miss(g, why);
  }
  btf__free(vmlinux);
  libbpf_set_print(KeepLibbpfLog);
  int rc = TryLoad(scope);
  for (int retry = 0; rc != 0 && retry < kExplainProbes; ++retry) {
    const std::string failed = FailedProgram(g_libbpf_log);
    if (failed.empty() || !Sees(GroupOf(failed))) break;
    Miss(GroupOf(failed), "the kernel refused its program " + failed + ": " + std::strerror(-rc));
    rc = TryLoad(scope);
  }
  libbpf_set_print(nullptr);
  if (rc != 0) {
    std::fputs(g_libbpf_log.c_str(), stderr);
    return Unexpected(ErrnoError(-rc, "--explain: load the BPF programs"));
  }
  for (dev_t d : scope.block_devs) {
    __u32 key = KernelDev(d);
    __u8 one = 1;
    bpf_map__update_elem(skel_->maps.block_devs, &key, sizeof key, &one, sizeof one, BPF_ANY);
  }
  if (scope.block_devs.empty()) {
    Miss(ExplainProbe::kBlock, "the target has no block device");
    Miss(ExplainProbe::kWriteback, "the target has no block device");
    Miss(ExplainProbe::kWbt, "the target has no block device");
  }
  return {};
}

}  // namespace

std::optional<std::string> ExplainRefusal() {
  if (geteuid() != 0) return "--explain needs root: it attaches BPF programs to the kernel";
  if (access("/sys/kernel/btf/vmlinux", R_OK) != 0)
    return "--explain needs a kernel with BTF (/sys/kernel/btf/vmlinux is missing)";
  return std::nullopt;
}

Result<std::unique_ptr<Explainer>> StartExplainer(const ExplainScope& scope) {
  auto e = std::make_unique<BpfExplainer>();
  if (auto st = e->Open(scope); !st) return Unexpected(st.error());
  return std::unique_ptr<Explainer>(std::move(e));
}

}  // namespace writelab
