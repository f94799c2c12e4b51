// SPDX-License-Identifier: MIT
// `writelab explain -- CMD` with libbpf: the skeleton of trace.bpf.c, loaded
// with the programs whose kernel points exist, each part attached or
// reported missing with its reason.
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <string_view>

#include "core/clock.h"
#include "explain/kernel_dev.h"
#include "explain/tracer.h"
#include "explain/wait_functions.h"
#include "trace.skel.h"

namespace writelab {
namespace {

// Which part a program of trace.bpf.c belongs to, by its name.
TracePart PartOf(std::string_view prog) {
  if (prog == "split_switch" || prog == "split_wakeup") return TracePart::kSplit;
  if (prog.starts_with("rq_") || prog == "split_rq_insert") return TracePart::kOverlap;
  if (prog.starts_with("commit_") || prog == "bio_queue") return TracePart::kJournal;
  if (prog == "conversion") return TracePart::kConversions;
  if (prog.starts_with("uring_")) return TracePart::kUring;
  if (prog.starts_with("blame_")) return TracePart::kBlame;
  if (prog.starts_with("lock_")) return TracePart::kLocks;
  return TracePart::kCalls;  // call_enter, call_exit, scope_fork
}

constexpr long kSyscalls[TRACE_SYSCALL_KINDS] = {
    SYS_write,     SYS_pwrite64,        SYS_writev, SYS_pwritev, SYS_pwritev2, SYS_fsync,
    SYS_fdatasync, SYS_sync_file_range, SYS_msync,  SYS_syncfs,  SYS_sync};

// A tracepoint's argument types as this kernel declares them, or "" when it
// has no such tracepoint: "struct io_ring_ctx *, void *, struct io_uring_cqe *".
std::string TracepointArgs(const btf* vmlinux, const std::string& point) {
  const int id = btf__find_by_name_kind(vmlinux, ("btf_trace_" + point).c_str(), BTF_KIND_TYPEDEF);
  const btf_type* t = id < 0 ? nullptr : btf__type_by_id(vmlinux, id);
  if (t) t = btf__type_by_id(vmlinux, t->type);                   // pointer
  if (t && btf_is_ptr(t)) t = btf__type_by_id(vmlinux, t->type);  // func proto
  if (!t || !btf_is_func_proto(t)) return "";
  std::string out;
  const btf_param* p = btf_params(t);
  for (int i = 1; i < btf_vlen(t); ++i) {  // the first is the tracepoint's own context
    __u32 id = p[i].type;
    const btf_type* a = btf__type_by_id(vmlinux, id);
    while (a && btf_is_ptr(a)) a = btf__type_by_id(vmlinux, id = a->type);
    const char* name = !a ? "?" : id == 0 ? "void" : btf__name_by_offset(vmlinux, a->name_off);
    out += std::string(i > 1 ? "," : "") + name;
  }
  return out;
}

// sched_switch as split.bpf.h reads it (5.18 on): preempt, prev, next, and
// prev's state.
constexpr const char* kSchedSwitchArgs = "bool,task_struct,task_struct,unsigned int";

// writeback_single_inode_start and its end (lock.bpf.h reads the inode).
constexpr const char* kWritebackInodeArgs = "inode,writeback_control,long unsigned int";

// Why the kernel cannot run the programs of part p as trace.bpf.c wrote them.
std::string MissingOn(const btf* vmlinux, TracePart p) {
  auto need = [&](const char* point, const char* args) -> std::string {
    const std::string have = TracepointArgs(vmlinux, point);
    if (have.empty()) return std::string("the kernel has no tracepoint ") + point;
    if (args && have != args) return std::string(point) + " has other arguments on this kernel";
    return "";
  };
  switch (p) {
    case TracePart::kCalls:
      return need("sys_enter", nullptr) + need("sched_process_fork", nullptr);
    case TracePart::kSplit:
      return need("sched_switch", kSchedSwitchArgs) + need("sched_wakeup", "task_struct");
    case TracePart::kOverlap:
      return need("block_rq_issue", nullptr) + need("block_rq_insert", nullptr);
    case TracePart::kJournal:  // a program on a point the kernel lacks would fail the load
      return need("jbd2_start_commit", nullptr) + need("jbd2_commit_locking", nullptr) +
             need("jbd2_commit_flushing", nullptr) + need("sched_waking", "task_struct");
    case TracePart::kConversions:
      return need("ext4_ext_handle_unwritten_extents", nullptr);
    case TracePart::kUring:
      return need("io_uring_submit_req", "io_kiocb") +
             need("io_uring_complete", "io_ring_ctx,void,io_uring_cqe");
    case TracePart::kBlame:
      return need("writeback_dirty_folio", "folio,address_space") + need("block_bio_queue", "bio");
    case TracePart::kLocks:  // the holder is read from the owner word: rwsem and mutex
      return need("contention_begin", "void,unsigned int") + need("contention_end", "void,int") +
             need("sched_switch", kSchedSwitchArgs) +
             need("writeback_single_inode_start", kWritebackInodeArgs) +
             need("writeback_single_inode", kWritebackInodeArgs);
  }
  return "";
}

class BpfTracer final : public Tracer {
 public:
  explicit BpfTracer(TraceSink sink) : sink_(std::move(sink)) {}
  ~BpfTracer() override {
    ring_buffer__free(ring_);
    Stop();
    trace_bpf__destroy(skel_);
  }
  // machine_self: `top`'s scope, every process but this one (0: explain's).
  Status Open(const std::vector<dev_t>& devices, pid_t machine_self = 0,
              const std::vector<WatchedFs>& file_systems = {});

  Status AddProcess(pid_t tgid) override {
    __u32 key = static_cast<__u32>(tgid);
    __u8 one = 1;
    if (bpf_map__update_elem(skel_->maps.scope, &key, sizeof key, &one, sizeof one, BPF_ANY) != 0)
      return Unexpected(ErrnoError(errno, "explain: add process " + std::to_string(tgid)));
    return {};
  }
  void RemoveProcess(pid_t tgid) override {
    __u32 key = static_cast<__u32>(tgid);
    bpf_map__delete_elem(skel_->maps.scope, &key, sizeof key, 0);  // gone already: fine
  }
  void SetSlow(uint64_t ns) override { skel_->data->slow_ns = ns; }
  // The programs submit without waking anyone (BPF_RB_NO_WAKEUP): a wake-up
  // per durability call would cost the watched program a context switch.
  // So the ring is read after a sleep instead.
  void Poll(int timeout_ms) override {
    if (timeout_ms > 0) usleep(static_cast<useconds_t>(timeout_ms) * 1000);
    ring_buffer__consume(ring_);
  }
  std::vector<TraceFile> Files() const override;
  std::vector<trace_hist> Histograms() const override;
  trace_totals Totals() const override;
  std::vector<pid_t> Processes() const override;
  std::string Missing(TracePart p) const override { return missing_[static_cast<size_t>(p)]; }
  size_t WaitFunctionsFound() const override { return wait_functions_; }
  void Stop() override {
    for (bpf_link* l : links_) bpf_link__destroy(l);
    links_.clear();
  }
  SplitSelfCheck Check() const override {
    return ReadSplitCheck(skel_->maps.split_state, skel_->maps.split_rqs, skel_->maps.split_commits,
                          NowNs());
  }
  std::vector<TraceCharges> OpenWindows() const override;

 private:
  static int OnEvent(void* self, void* data, size_t size);
  void Miss(TracePart p, const std::string& why) {
    std::string& m = missing_[static_cast<size_t>(p)];
    if (m.empty()) m = why;
  }
  TraceSink sink_;
  trace_bpf* skel_ = nullptr;
  ring_buffer* ring_ = nullptr;
  std::vector<bpf_link*> links_;
  std::array<std::string, kTraceParts> missing_;
  size_t wait_functions_ = 0;
};

int BpfTracer::OnEvent(void* self, void* data, size_t size) {
  auto* t = static_cast<BpfTracer*>(self);
  __u32 type = 0;
  if (size < sizeof type) return 0;
  std::memcpy(&type, data, sizeof type);
  if (type == TRACE_EVENT_CALL && size >= sizeof(TraceCall) && t->sink_.call) {
    TraceCall c;
    std::memcpy(&c, data, sizeof c);
    t->sink_.call(c);
  } else if (type == TRACE_EVENT_COMMIT && size >= sizeof(TraceCommit) && t->sink_.commit) {
    TraceCommit c;
    std::memcpy(&c, data, sizeof c);
    t->sink_.commit(c);
  } else if (type == TRACE_EVENT_STATS && size >= sizeof(TraceCommitStats) && t->sink_.stats) {
    TraceCommitStats s;
    std::memcpy(&s, data, sizeof s);
    t->sink_.stats(s);
  } else if (type == TRACE_EVENT_FILE && size >= sizeof(TraceFileName) && t->sink_.file) {
    TraceFileName f;
    std::memcpy(&f, data, sizeof f);
    for (auto& part : f.name) part[TRACE_NAME_LEN - 1] = 0;
    t->sink_.file(f);
  } else if (type == TRACE_EVENT_CHARGE && t->sink_.charges) {
    TraceCharges c;
    if (ReadChargeRecord(data, size, c)) t->sink_.charges(c);
  }
  return 0;
}

Status BpfTracer::Open(const std::vector<dev_t>& devices, pid_t machine_self,
                       const std::vector<WatchedFs>& file_systems) {
  btf* vmlinux = btf__load_vmlinux_btf();
  if (!vmlinux) return Unexpected(ErrnoError(errno, "explain: read the kernel's BTF"));
  for (int p = 0; p < kTraceParts; ++p) {
    const std::string why = MissingOn(vmlinux, static_cast<TracePart>(p));
    if (!why.empty()) Miss(static_cast<TracePart>(p), why);
  }
  btf__free(vmlinux);
  if (!Missing(TracePart::kCalls).empty())
    return Unexpected(PlainError("explain: " + Missing(TracePart::kCalls)));
  skel_ = trace_bpf__open();
  if (!skel_) return Unexpected(ErrnoError(errno, "explain: open the BPF programs"));
  for (size_t i = 0; i < std::size(kSyscalls); ++i) skel_->rodata->call_nrs[i] = kSyscalls[i];
  skel_->rodata->fallocate_nr = SYS_fallocate;
  skel_->rodata->machine_self = static_cast<__u32>(machine_self);
  skel_->rodata->blame_page_size = static_cast<__u32>(sysconf(_SC_PAGESIZE));
  const std::vector<WaitRange> waits = WaitRanges();
  SetWaitRanges(skel_->rodata, waits);
  wait_functions_ = waits.size();
  bpf_program* prog;
  bpf_object__for_each_program(prog, skel_->obj) {
    if (!Missing(PartOf(bpf_program__name(prog))).empty()) bpf_program__set_autoload(prog, false);
  }
  if (int rc = trace_bpf__load(skel_); rc != 0)
    return Unexpected(ErrnoError(-rc, "explain: load the BPF programs"));
  for (dev_t d : devices) {
    __u32 key = KernelDev(d);
    __u8 one = 1;
    bpf_map__update_elem(skel_->maps.block_devs, &key, sizeof key, &one, sizeof one, BPF_ANY);
  }
  for (const WatchedFs& w : file_systems) {
    __u32 fs = KernelDev(w.fs), disk = KernelDev(w.disk), journal = 0;
    __u8 one = 1;
    bpf_map__update_elem(skel_->maps.fs_devs, &fs, sizeof fs, &journal, sizeof journal, BPF_ANY);
    bpf_map__update_elem(skel_->maps.block_devs, &disk, sizeof disk, &one, sizeof one, BPF_ANY);
  }
  ring_ = ring_buffer__new(bpf_map__fd(skel_->maps.events), OnEvent, this, nullptr);
  if (!ring_) return Unexpected(ErrnoError(errno, "explain: open the ring buffer"));
  bpf_object__for_each_program(prog, skel_->obj) {
    const TracePart p = PartOf(bpf_program__name(prog));
    if (!Missing(p).empty()) continue;
    bpf_link* link = bpf_program__attach(prog);
    if (!link) {
      if (p == TracePart::kCalls)
        return Unexpected(
            ErrnoError(errno, std::string("explain: attach ") + bpf_program__section_name(prog)));
      Miss(p,
           std::string("attach ") + bpf_program__section_name(prog) + ": " + std::strerror(errno));
      continue;
    }
    links_.push_back(link);
  }
  return {};
}

std::vector<TraceFile> BpfTracer::Files() const {
  const int cpus = libbpf_num_possible_cpus();
  std::vector<trace_file_stats> per(static_cast<size_t>(cpus > 0 ? cpus : 1));
  std::vector<TraceFile> out;
  trace_file_key key{}, next{};
  const trace_file_key* prev = nullptr;
  while (bpf_map__get_next_key(skel_->maps.files, prev, &next, sizeof next) == 0) {
    if (bpf_map__lookup_elem(skel_->maps.files, &next, sizeof next, per.data(),
                             per.size() * sizeof(trace_file_stats), 0) == 0) {
      TraceFile f{next, {}};  // the CPUs' shares, added up
      for (const trace_file_stats& c : per) {
        f.stats.calls += c.calls, f.stats.bytes += c.bytes, f.stats.ns += c.ns;
        f.stats.max_ns = std::max<__u64>(f.stats.max_ns, c.max_ns);
        for (int i = 0; i < SPLIT_PARTS; ++i) f.stats.part_ns[i] += c.part_ns[i];
        for (int i = 0; i < SPLIT_OVERLAPS; ++i) f.stats.during_ns[i] += c.during_ns[i];
        f.stats.errors += c.errors;
        f.stats.commits += c.commits, f.stats.conversions += c.conversions;
        f.stats.lock_ns += c.lock_ns;
      }
      out.push_back(f);
    }
    key = next;
    prev = &key;
  }
  return out;
}

std::vector<trace_hist> BpfTracer::Histograms() const {
  const int cpus = libbpf_num_possible_cpus();
  std::vector<trace_hist> out(TRACE_CLASSES), per(static_cast<size_t>(cpus > 0 ? cpus : 1));
  for (__u32 c = 0; c < TRACE_CLASSES; ++c) {
    if (bpf_map__lookup_elem(skel_->maps.hists, &c, sizeof c, per.data(),
                             per.size() * sizeof(trace_hist), 0) != 0)
      continue;
    for (const trace_hist& h : per)
      for (int b = 0; b < TRACE_HIST_BUCKETS; ++b) out[c].buckets[b] += h.buckets[b];
  }
  return out;
}

std::vector<pid_t> BpfTracer::Processes() const {
  std::vector<pid_t> out;
  __u32 key = 0, next = 0;
  const __u32* prev = nullptr;
  while (bpf_map__get_next_key(skel_->maps.scope, prev, &next, sizeof next) == 0) {
    out.push_back(static_cast<pid_t>(next));
    key = next;
    prev = &key;
  }
  return out;
}

// The windows still open: each group's charges not yet sent (commits
// left out: an open commit's data is in its disk's window too).
std::vector<TraceCharges> BpfTracer::OpenWindows() const {
  const uint64_t now_ns = NowNs();
  std::vector<TraceCharges> out;
  __u64 key = 0, next = 0;
  const __u64* prev = nullptr;
  while (bpf_map__get_next_key(skel_->maps.blame_group_of, prev, &next, sizeof next) == 0) {
    key = next;
    prev = &key;
    __u32 at = 0;
    trace_blame_group g{};
    const __u32 kind = static_cast<__u32>(next & 0xff), domain = static_cast<__u32>(next >> 8);
    if (kind == TRACE_CHARGE_COMMIT ||
        bpf_map__lookup_elem(skel_->maps.blame_group_of, &next, sizeof next, &at, sizeof at, 0) ||
        bpf_map__lookup_elem(skel_->maps.blame_groups, &at, sizeof at, &g, sizeof g, 0))
      continue;
    TraceCharges e{};
    e.type = TRACE_EVENT_CHARGE;
    e.kind = kind;
    e.dev = domain;
    e.t0 = e.t1 = now_ns;
    trace_blame_window w{};
    if (bpf_map__lookup_elem(kind == TRACE_CHARGE_DIRTY ? skel_->maps.blame_dirty_windows
                                                        : skel_->maps.blame_windows,
                             &domain, sizeof domain, &w, sizeof w, 0) == 0)
      e.t0 = w.t0, e.t1 = std::max(w.t0, w.last);  // it ends at its last charge
    for (const trace_blame_slot& s : g.s) {
      if (s.state != TRACE_SLOT_READY || s.val.bytes == 0) continue;
      trace_charge& c = e.e[e.n++];
      c.tgid = s.key.tgid, c.cause = s.key.cause, c.dev = s.key.dev, c.ino = s.key.ino;
      c.bytes = s.val.bytes;
      std::memcpy(c.comm, s.val.comm, sizeof c.comm);
    }
    e.rest_bytes = g.rest_bytes;
    e.done_bytes = g.done_bytes;
    if (e.n || e.rest_bytes || e.done_bytes) out.push_back(e);
  }
  return out;
}

trace_totals BpfTracer::Totals() const {
  __u32 zero = 0;
  trace_totals t{};
  bpf_map__lookup_elem(skel_->maps.totals, &zero, sizeof zero, &t, sizeof t, 0);
  return t;
}

}  // namespace

Result<std::unique_ptr<Tracer>> StartMachineTracer(TraceSink sink,
                                                   const std::vector<WatchedFs>& file_systems) {
  auto t = std::make_unique<BpfTracer>(std::move(sink));
  if (auto st = t->Open({}, getpid(), file_systems); !st) return Unexpected(st.error());
  return std::unique_ptr<Tracer>(std::move(t));
}

Result<std::unique_ptr<Tracer>> StartTracer(TraceSink sink, const std::vector<dev_t>& devices) {
  auto t = std::make_unique<BpfTracer>(std::move(sink));
  if (auto st = t->Open(devices); !st) return Unexpected(st.error());
  return std::unique_ptr<Tracer>(std::move(t));
}

}  // namespace writelab
