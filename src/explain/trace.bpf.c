// SPDX-License-Identifier: (MIT OR GPL-2.0)
// `writelab explain -- CMD` and `--pid PID`: every write and sync call of a
// process and its descendants, timed and split in the kernel.
//
// Scope: the processes in `scope` (the one started or attached to, and every
// process it forks from then on). Their write-family calls on regular files,
// their sync calls and their io_uring writes and syncs are timed; the file
// systems and disks under the files they touch join `fs_devs` and
// `block_devs` as they are seen. Each call is split (split.bpf.h) into what
// its thread did, from the scheduler's events, and into what the scope's
// disks and journals were doing meanwhile, from their requests and
// commits (as explain.bpf.c does for an experiment). What is kept: per
// file and class of call,
// the sums (`files`); per class, a latency histogram (`hists`); in the ring
// buffer, every call at least `slow_ns` long and every durability call
// (fsync, fdatasync, sync_file_range, msync, syncfs, sync, synchronous
// writes), and the journal's commits. Nothing is sent for a plain fast
// write. A full map or ring is counted in `totals`, never silent.
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "block.bpf.h"
#include "trace_counters.h"

// `top`'s writes begin their split only when they leave their CPU.
#define SPLIT_LAZY
#include "split.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

extern unsigned int CONFIG_HZ __kconfig __weak;

// The system call number of each syscall kind (-1: none on this arch).
const volatile long call_nrs[TRACE_SYSCALL_KINDS] = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
// fallocate's number: counted, not timed (a diagnosis names preallocation
// only when the scope made one).
const volatile long fallocate_nr = -1;
// Calls at least this long are sent to the ring (user space lowers and
// raises it to the 99th percentile so far, or holds --slow).
volatile __u64 slow_ns = 1000000;
// `writelab top`: every process is in the scope but this one (writelab's
// own); 0: only the scope map's processes (explain).
const volatile __u32 machine_self = 0;
// With machine_self: a write's file is looked up at its end, and only for a
// write that left its CPU (TopWriteBegins) and lasted at least this long
// (ns). Every process's every write would otherwise pay the walk from its
// fd to its inode; one quicker than this did no device I/O (not
// synchronous, not direct: a write to the page cache), and is neither kept
// nor counted.
const volatile __u64 machine_resolve_ns = 5000;

#define MAX_SCOPE 16384
#define MAX_CALLS 16384
#define MAX_FILES 16384

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, MAX_SCOPE);
  __type(key, __u32);  // tgid
  __type(value, __u8);
} scope SEC(".maps");

struct tcall {
  struct file* file;  // for its name, when it is new (held for the call's length)
  __u64 start_ns;
  __u32 class_id;
  __u32 dev;
  __s32 fd;
  __u32 active;  // a call is in flight
  __u64 ino;
  __u64 commits0, conversions0;
  // `top`'s writes (machine_self): the split begins at the call's first
  // switch-out (SplitLazy), when begun is set; a write that never left its
  // CPU is dropped at its end.
  __u32 lazy, begun;
};

// The call a thread is in, in the thread's own storage: no shared map to
// insert into and delete from on every call.
struct {
  __uint(type, BPF_MAP_TYPE_TASK_STORAGE);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, int);
  __type(value, struct tcall);
} calls SEC(".maps");

struct ureq {
  struct file* file;
  __u64 start_ns;
  __u32 tid, tgid;
  __u32 class_id, dev;
  __u64 ino;
  __u64 commits0, conversions0;
};

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, MAX_CALLS);
  __type(key, __u64);  // the io_kiocb
  __type(value, struct ureq);
} uring SEC(".maps");

// Per CPU: a call adds to its file's sums without an atomic operation;
// user space adds the CPUs up.
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_HASH);
  __uint(max_entries, MAX_FILES);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, struct trace_file_key);
  __type(value, struct trace_file_stats);
} files SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, TRACE_CLASSES);
  __type(key, __u32);
  __type(value, struct trace_hist);
} hists SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct trace_totals);
} totals SEC(".maps");

// The file systems the scope wrote to (dev_t, kernel encoding): the pid of
// each one's journal thread once a commit named it (0 before).
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 64);
  __type(key, __u32);
  __type(value, __u32);
} fs_devs SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 64);
  __type(key, __u32);  // a disk's dev_t (major << 20 | first minor)
  __type(value, __u8);
} block_devs SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 64);
  __type(key, __u32);    // a journal thread's pid
  __type(value, __u32);  // its file system (dev_t)
} journal_threads SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 8 << 20);
} events SEC(".maps");

#define S_IFMT 0170000
#define S_IFREG 0100000
#define O_DSYNC_BIT 010000
#define O_DIRECT_BIT 040000
#define RWF_DSYNC_BIT 2
#define RWF_SYNC_BIT 4

static __always_inline struct trace_totals* Totals(void) {
  __u32 zero = 0;
  return bpf_map_lookup_elem(&totals, &zero);
}

static __always_inline void Count(__u64* field) {
  if (field) __sync_fetch_and_add(field, 1);
}

// A write of `top`'s leaves its CPU for the first time (split.bpf.h): its
// split begins, and the commits and conversions it may wait for count from
// now (none can end for it while it runs).
static __always_inline __u64 SplitLazyStart(struct task_struct* task) {
  if (!machine_self) return 0;  // explain: every call's split begins with it
  struct tcall* c = bpf_task_storage_get(&calls, task, 0, 0);
  if (!c || !c->active || !c->lazy || c->begun) return 0;
  struct trace_totals* t = Totals();
  if (t) {
    c->commits0 = t->commits;
    c->conversions0 = t->conversions;
  }
  c->begun = 1;
  return c->start_ns;
}

static __always_inline __u32 Tgid(void) { return bpf_get_current_pid_tgid() >> 32; }

static __always_inline int InScope(void) {
  __u32 tgid = Tgid();
  if (machine_self) return tgid != machine_self;
  return bpf_map_lookup_elem(&scope, &tgid) != 0;
}

static __always_inline int OnDisk(__u32 dev) { return bpf_map_lookup_elem(&block_devs, &dev) != 0; }

static __always_inline int OnFs(__u32 dev) { return bpf_map_lookup_elem(&fs_devs, &dev) != 0; }

#include "blame.bpf.h"
#include "lock.bpf.h"

// ---- block layer: requests on the scope's disks

SEC("tp_btf/block_rq_issue")
int BPF_PROG(rq_issue, struct request* rq) {
  const __u32 disk = DiskDev(rq);
  if (!OnDisk(disk)) return 0;
  const __u32 opf = BPF_CORE_READ(rq, cmd_flags);
  if (IsWrite(opf) || IsFlush(opf)) SplitRqIssue(rq, opf);
  if ((opf & 0xff) == 2)  // REQ_OP_FLUSH: its window ends
    BlameRoll(&blame_windows, disk, TRACE_CHARGE_WINDOW, 1, bpf_ktime_get_ns());
  return 0;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(rq_complete, struct request* rq, blk_status_t error, unsigned int nr_bytes) {
  SplitRqDone(rq);
  const __u32 disk = DiskDev(rq);
  if (nr_bytes && (BPF_CORE_READ(rq, cmd_flags) & 0xff) == 1 && OnDisk(disk))  // REQ_OP_WRITE
    BlameDone(disk, nr_bytes);
  return 0;
}

SEC("tp_btf/block_rq_requeue")
int BPF_PROG(rq_requeue, struct request* rq) {
  SplitRqRequeue(rq);
  return 0;
}

// What the journal threads queue for the scope's disks.
SEC("tp_btf/block_bio_queue")
int BPF_PROG(bio_queue, struct bio* bio) {
  __u32 tid = (__u32)bpf_get_current_pid_tgid();
  if (!bpf_map_lookup_elem(&journal_threads, &tid)) return 0;
  struct trace_totals* t = Totals();
  if (t) __sync_fetch_and_add(&t->journal_bytes, BPF_CORE_READ(bio, bi_iter.bi_size));
  return 0;
}

// ---- journal commits and extent conversions on the scope's file systems

// How many traced commits are locked now (commit_locking below): a wake-up
// of the machine looks no further while none is. A commit whose flushing
// was not seen is let go at its end; one whose end was not seen either
// stays counted, and only the fast path is lost.
volatile __s32 commits_locked = 0;

SEC("tp_btf/jbd2_start_commit")
int BPF_PROG(commit_start, journal_t* journal, transaction_t* transaction) {
  __u32 dev = BPF_CORE_READ(journal, j_fs_dev, bd_dev);
  __u32* thread = bpf_map_lookup_elem(&fs_devs, &dev);
  if (!thread) return 0;
  __u32 pid = BPF_CORE_READ(journal, j_task, pid);
  if (pid && *thread != pid) {
    *thread = pid;
    bpf_map_update_elem(&journal_threads, &pid, &dev, BPF_ANY);
  }
  struct trace_totals* t = Totals();
  if (!t) return 0;
  __sync_fetch_and_add(&t->commits, 1);
  SplitCommitStart(dev, t->journal_bytes, (__u64)BPF_CORE_READ(transaction, t_tid));
  return 0;
}

SEC("tp_btf/jbd2_end_commit")
int BPF_PROG(commit_end, journal_t* journal, transaction_t* transaction) {
  __u32 dev = BPF_CORE_READ(journal, j_fs_dev, bd_dev);
  struct split_commit open;
  if (!OnFs(dev) || !SplitCommitEnd(dev, &open)) return 0;
  if (open.locked_ns && !open.unlocked_ns) __sync_fetch_and_add(&commits_locked, -1);
  BlameClose(dev, TRACE_CHARGE_COMMIT, 0, open.start_ns, bpf_ktime_get_ns(), &open);
  struct trace_totals* t = Totals();
  if (!t) return 0;
  struct trace_commit_event* e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
  if (!e) {
    Count(&t->lost_events);
    return 0;
  }
  e->type = TRACE_EVENT_COMMIT;
  e->dev = dev;
  e->start_ns = open.start_ns;
  e->end_ns = bpf_ktime_get_ns();
  e->tid = open.tid;
  e->journal_bytes = t->journal_bytes - open.journal_bytes0;
  bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
  return 0;
}

SEC("tp_btf/jbd2_run_stats")
int BPF_PROG(commit_stats, dev_t dev, tid_t tid, struct transaction_run_stats_s* stats) {
  __u32 d = dev;
  if (!OnFs(d)) return 0;
  struct trace_totals* t = Totals();
  struct trace_stats_event* e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
  if (!e) {
    if (t) Count(&t->lost_events);
    return 0;
  }
  e->type = TRACE_EVENT_STATS;
  e->dev = d;
  e->tid = tid;
  e->blocks_logged = BPF_CORE_READ(stats, rs_blocks_logged);
  e->running_j = BPF_CORE_READ(stats, rs_running);
  e->locked_j = BPF_CORE_READ(stats, rs_locked);
  e->flushing_j = BPF_CORE_READ(stats, rs_flushing);
  e->logging_j = BPF_CORE_READ(stats, rs_logging);
  bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
  if (t) t->hz = CONFIG_HZ;
  return 0;
}

// ---- a commit's wait for the handles open on its transaction: once
// locked, no handle may start on it and the commit waits until the open
// ones stop; the thread whose handle stops last is the one it waited for,
// and it is the one that wakes the commit's thread (stop_this_handle's
// wake-up of j_wait_updates), whether its handle stopped or was restarted
// (a long truncate's: jbd2 traces no stop of it). A flusher stands for its
// file's dirtier, as a lock's holder does.

static __always_inline struct split_commit* CommitOf(journal_t* journal,
                                                     transaction_t* transaction) {
  __u32 dev = BPF_CORE_READ(journal, j_fs_dev, bd_dev);
  struct split_commit* c = bpf_map_lookup_elem(&split_commits, &dev);
  return c && c->tid == (__u64)BPF_CORE_READ(transaction, t_tid) ? c : 0;
}

SEC("tp_btf/jbd2_commit_locking")
int BPF_PROG(commit_locking, journal_t* journal, transaction_t* transaction) {
  struct split_commit* c = CommitOf(journal, transaction);
  if (!c || c->locked_ns) return 0;
  c->locked_ns = bpf_ktime_get_ns();
  __sync_fetch_and_add(&commits_locked, 1);
  return 0;
}

SEC("tp_btf/jbd2_commit_flushing")
int BPF_PROG(commit_flushing, journal_t* journal, transaction_t* transaction) {
  struct split_commit* c = CommitOf(journal, transaction);
  if (!c || !c->locked_ns || c->unlocked_ns) return 0;
  c->unlocked_ns = bpf_ktime_get_ns();
  __sync_fetch_and_add(&commits_locked, -1);
  return 0;
}

// Every wake-up of the machine, in the waker's context: one load while no
// traced commit is locked. A locked commit's thread woken: the waker's
// handle was the last open on its transaction.
SEC("tp_btf/sched_waking")
int BPF_PROG(commit_waker, struct task_struct* p) {
  if (!commits_locked) return 0;
  __u32 pid = p->pid;
  __u32* dev = bpf_map_lookup_elem(&journal_threads, &pid);  // a commit's thread
  if (!dev) return 0;
  struct split_commit* c = bpf_map_lookup_elem(&split_commits, dev);
  if (!c || !c->locked_ns || c->unlocked_ns) return 0;
  struct task_struct* task = bpf_get_current_task_btf();
  struct split_lock_holder h = {};
  const __u64 now = bpf_ktime_get_ns();
  h.ns = now > c->locked_ns ? now - c->locked_ns : 0;
  h.holder = SPLIT_LOCK_HELD;
  h.tgid = task->tgid;
  bpf_probe_read_kernel_str(h.comm, sizeof h.comm, &task->comm);
  LockFlusher(task, &h);
  c->handle = h;
  return 0;
}

SEC("tp_btf/ext4_ext_handle_unwritten_extents")
int BPF_PROG(conversion, struct inode* inode, struct ext4_map_blocks* map, int flags) {
  if (!(flags & 0x10) || !OnFs(BPF_CORE_READ(inode, i_sb, s_dev))) return 0;
  struct trace_totals* t = Totals();
  if (t) __sync_fetch_and_add(&t->conversions, 1);
  return 0;
}

// ---- the scope: a process and every process it forks

SEC("tp_btf/sched_process_fork")
int BPF_PROG(scope_fork, struct task_struct* parent, struct task_struct* child) {
  __u32 ptgid = BPF_CORE_READ(parent, tgid);
  if (!bpf_map_lookup_elem(&scope, &ptgid)) return 0;
  __u32 ctgid = BPF_CORE_READ(child, tgid);
  __u8 one = 1;
  if (bpf_map_update_elem(&scope, &ctgid, &one, BPF_ANY) != 0) {
    struct trace_totals* t = Totals();
    if (t) Count(&t->lost_scope);
  }
  return 0;
}

// A process of the scope ends (its last thread): its number leaves the
// scope at once, since the kernel may hand it to another process, which is
// not the scope's unless a process of the scope forks it. The live count
// drops before the tracepoint fires (kernels with and without its
// group_dead argument).
SEC("tp_btf/sched_process_exit")
int BPF_PROG(scope_exit, struct task_struct* task) {
  if (BPF_CORE_READ(task, signal, live.counter) != 0) return 0;
  __u32 tgid = BPF_CORE_READ(task, tgid);
  bpf_map_delete_elem(&scope, &tgid);
  return 0;
}

// ---- the timed calls

static __always_inline int KindOf(long nr) {
  for (int i = 0; i < TRACE_SYSCALL_KINDS; ++i)
    if (call_nrs[i] == nr) return i;
  return -1;
}

static __always_inline int IsWriteKind(int kind) { return kind <= TRACE_KIND_PWRITEV2; }

// The file behind fd in the current task, or null.
static __always_inline struct file* FileOf(int fd) {
  if (fd < 0) return 0;
  struct task_struct* task = (struct task_struct*)bpf_get_current_task();
  struct fdtable* fdt = BPF_CORE_READ(task, files, fdt);
  if (!fdt || (unsigned)fd >= BPF_CORE_READ(fdt, max_fds)) return 0;
  struct file** fds = BPF_CORE_READ(fdt, fd);
  struct file* f = 0;
  bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]);
  return f;
}

// A regular file's identity; joins its file system and disk to the scope's.
// 0 when f is not a regular file.
static __always_inline int NoteFile(struct file* f, __u32* dev, __u64* ino) {
  if (!f) return 0;
  struct inode* inode = BPF_CORE_READ(f, f_inode);
  if ((BPF_CORE_READ(inode, i_mode) & S_IFMT) != S_IFREG) return 0;
  *dev = BPF_CORE_READ(inode, i_sb, s_dev);
  *ino = BPF_CORE_READ(inode, i_ino);
  if (!bpf_map_lookup_elem(&fs_devs, dev)) {  // the first call on this file system
    __u32 zero32 = 0;
    bpf_map_update_elem(&fs_devs, dev, &zero32, BPF_NOEXIST);
    __u32 disk = KernelDevOfDisk(BPF_CORE_READ(inode, i_sb, s_bdev, bd_disk));
    __u8 one = 1;
    if (disk) bpf_map_update_elem(&block_devs, &disk, &one, BPF_NOEXIST);
  }
  return 1;
}

static __always_inline __u32 WriteClass(struct file* f, __u64 rwf) {
  const __u32 flags = BPF_CORE_READ(f, f_flags);
  __u32 c = 0;
  if ((flags & O_DSYNC_BIT) || (rwf & (RWF_DSYNC_BIT | RWF_SYNC_BIT))) c |= TRACE_CLASS_SYNC;
  if (flags & O_DIRECT_BIT) c |= TRACE_CLASS_DIRECT;
  return c;
}

static __always_inline __u64 SixthArg(struct pt_regs* regs) {
#if defined(__TARGET_ARCH_x86)
  return BPF_CORE_READ(regs, r9);
#elif defined(__TARGET_ARCH_arm64)
  return BPF_CORE_READ((struct user_pt_regs*)regs, regs[5]);
#else
  return 0;
#endif
}

// `top`'s write begins: its start only. Its split, counters and file wait
// until it leaves its CPU (SplitLazyStart); one that never does is dropped
// at its end (call_exit): every process's every write pays one clock read
// and its thread's storage, no more.
static __always_inline int TopWriteBegins(int kind, __u64 now) {
  struct tcall* c =
      bpf_task_storage_get(&calls, bpf_get_current_task_btf(), 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
  if (!c) {
    struct trace_totals* t = Totals();
    if (t) Count(&t->lost_calls);
    return 0;
  }
  c->file = 0;
  c->fd = -1;
  c->dev = 0;
  c->ino = 0;
  c->class_id = (__u32)kind * 4;
  c->commits0 = c->conversions0 = 0;
  c->start_ns = now;
  c->lazy = 1;
  c->begun = 0;
  c->active = 1;
  return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(call_enter, struct pt_regs* regs, long id) {
  const __u64 now = bpf_ktime_get_ns();  // before anything that may allocate
  if (!InScope()) return 0;
  const int kind = KindOf(id);
  if (kind < 0) {
    struct trace_totals* t = id == fallocate_nr ? Totals() : 0;
    if (t) Count(&t->fallocates);
    return 0;
  }
  if (machine_self && IsWriteKind(kind)) return TopWriteBegins(kind, now);
  __u32 dev = 0, cls = 0;
  __u64 ino = 0;
  struct file* f = 0;
  int fd = -1;
  if (kind != TRACE_KIND_MSYNC && kind != TRACE_KIND_SYNC) {
    fd = (int)PT_REGS_PARM1_CORE_SYSCALL(regs);
    f = FileOf(fd);
    if (!NoteFile(f, &dev, &ino)) return 0;
    if (IsWriteKind(kind)) cls = WriteClass(f, kind == TRACE_KIND_PWRITEV2 ? SixthArg(regs) : 0);
  }
  struct trace_totals* t = Totals();
  if (!t) return 0;
  struct tcall* c =
      bpf_task_storage_get(&calls, bpf_get_current_task_btf(), 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
  if (!c || !SplitBegin(now)) {
    Count(&t->lost_calls);
    return 0;
  }
  c->lazy = 0;
  c->file = f;
  c->fd = fd;
  c->dev = dev;
  c->ino = ino;
  c->class_id = (__u32)kind * 4 + cls;
  c->commits0 = t->commits;
  c->conversions0 = t->conversions;
  c->start_ns = now;
  c->active = 1;
  return 0;
}

// Log-linear bucket of v (TRACE_HIST_SUB_BITS per power of two).
static __always_inline __u32 Bucket(__u64 v) {
  const __u64 sub = 1ull << TRACE_HIST_SUB_BITS;
  if (v < sub) return (__u32)v;
  __u32 msb = 0;
  __u64 x = v;
  if (x >> 32) {
    msb += 32;
    x >>= 32;
  }
  if (x >> 16) {
    msb += 16;
    x >>= 16;
  }
  if (x >> 8) {
    msb += 8;
    x >>= 8;
  }
  if (x >> 4) {
    msb += 4;
    x >>= 4;
  }
  if (x >> 2) {
    msb += 2;
    x >>= 2;
  }
  if (x >> 1) {
    msb += 1;
  }
  const __u32 shift = msb - TRACE_HIST_SUB_BITS;
  const __u32 b = (shift + 1) * (__u32)sub + (__u32)((v >> shift) - sub);
  return b < TRACE_HIST_BUCKETS ? b : TRACE_HIST_BUCKETS - 1;
}

// A finished call: into its file's sums, its class's histogram, and, when
// slow or a durability call, the ring.
// A file's path, the first time a call on it is counted: its dentries up to
// the root, crossing mounts (as d_path does), for a file closed before user
// space could read /proc/PID/fd.
static __always_inline void SendName(struct file* f, __u32 dev, __u64 ino) {
  struct trace_file_event* e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
  if (!e) return;  // the path may still be found through /proc
  e->type = TRACE_EVENT_FILE;
  e->dev = dev;
  e->ino = ino;
  e->parts = 0;
  e->complete = 0;
  struct dentry* d = BPF_CORE_READ(f, f_path.dentry);
  struct vfsmount* vm = BPF_CORE_READ(f, f_path.mnt);
  struct mount* m = container_of(vm, struct mount, mnt);
  for (int i = 0; i < TRACE_PATH_PARTS + 4; ++i) {
    struct dentry* root = BPF_CORE_READ(m, mnt.mnt_root);
    if (d == root) {  // the top of this mount: on to where it is mounted
      struct mount* parent = BPF_CORE_READ(m, mnt_parent);
      if (parent == m) {
        e->complete = 1;
        break;
      }
      d = BPF_CORE_READ(m, mnt_mountpoint);
      m = parent;
      continue;
    }
    const __u32 k = e->parts;
    if (k >= TRACE_PATH_PARTS) break;
    bpf_probe_read_kernel_str(e->name[k], TRACE_NAME_LEN, BPF_CORE_READ(d, d_name.name));
    e->parts = k + 1;
    struct dentry* up = BPF_CORE_READ(d, d_parent);
    if (up == d) {
      e->complete = 1;
      break;
    }
    d = up;
  }
  bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
}

// The lock waits of a call that had none (an io_uring request: no thread
// waits in it).
const struct split_lock no_lock_waits = {};

static __always_inline void Finish(struct file* file, __u32 class_id, __u32 dev, __u64 ino,
                                   __s32 fd, __u32 tid, __u32 tgid, __u64 start, __u64 ns,
                                   __s64 ret, const __u64* parts, const __u64* during,
                                   const struct split_lock* lock, __u64 commits,
                                   __u64 conversions) {
  struct trace_totals* t = Totals();
  if (!t) return;
  struct trace_file_key key = {dev, class_id, ino};
  struct trace_file_stats* fs = bpf_map_lookup_elem(&files, &key);
  if (!fs) {
    struct trace_file_stats zero = {};
    if (bpf_map_update_elem(&files, &key, &zero, BPF_NOEXIST) == 0 && file)
      SendName(file, dev, ino);
    fs = bpf_map_lookup_elem(&files, &key);
  }
  if (fs) {  // this CPU's share: no other CPU writes it
    fs->calls++;
    if (ret > 0) fs->bytes += (__u64)ret;
    if (ret < 0) fs->errors++;
    fs->ns += ns;
    if (ns > fs->max_ns) fs->max_ns = ns;
    for (int i = 0; i < SPLIT_PARTS; ++i) fs->part_ns[i] += parts[i];
    for (int i = 0; i < SPLIT_OVERLAPS; ++i) fs->during_ns[i] += during[i];
    fs->commits += commits;
    fs->conversions += conversions;
    fs->lock_ns += lock->wait_ns;
  } else {
    Count(&t->lost_files);
  }
  __u32 cls = class_id;
  struct trace_hist* h = cls < TRACE_CLASSES ? bpf_map_lookup_elem(&hists, &cls) : 0;
  if (h) {
    __u32 b = Bucket(ns);
    if (b < TRACE_HIST_BUCKETS) h->buckets[b]++;
  }
  if (ns < slow_ns && !TraceIsDurability(class_id)) return;
  struct trace_call_event* e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
  if (!e) {
    Count(&t->lost_events);
    return;
  }
  e->type = TRACE_EVENT_CALL;
  e->class_id = class_id;
  e->start_ns = start;
  e->ns = ns;
  e->tid = tid;
  e->tgid = tgid;
  e->fd = fd;
  e->dev = dev;
  e->ino = ino;
  e->ret = ret;
  for (int i = 0; i < SPLIT_PARTS; ++i) e->part_ns[i] = parts[i];
  for (int i = 0; i < SPLIT_OVERLAPS; ++i) e->during_ns[i] = during[i];
  e->lock = *lock;
  e->commits = commits;
  e->conversions = conversions;
  bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(call_exit, struct pt_regs* regs, long ret) {
  // Only a thread in the scope when its call began has one in flight.
  struct tcall* in_task = bpf_task_storage_get(&calls, bpf_get_current_task_btf(), 0, 0);
  if (!in_task || !in_task->active) return 0;
  in_task->active = 0;
  // A write of `top`'s that never left its CPU waited for nothing top
  // reports (a synchronous write waits for its device): not even a clock
  // read.
  if (in_task->lazy && !in_task->begun) return 0;
  const __u64 now = bpf_ktime_get_ns();
  struct trace_totals* t = Totals();
  if (!t) return 0;
  struct tcall c = *in_task;
  __u64 ns = 0, parts[SPLIT_PARTS] = {}, during[SPLIT_OVERLAPS] = {}, sum = 0;
  const struct split_lock* lock = &no_lock_waits;
  if (!SplitEnd(now, &ns, parts, during, &lock)) {
    if (c.lazy) Count(&t->lost_calls);  // its split's storage could not be had
    return 0;
  }
  for (int i = 0; i < SPLIT_PARTS; ++i) sum += parts[i];
  if (sum != ns) Count(&t->unbalanced);               // the parts are the call's, end to end
  if (machine_self && IsWriteKind(c.class_id / 4)) {  // `top`: its file, now
    if (ns < machine_resolve_ns) return 0;
    c.fd = (int)PT_REGS_PARM1_CORE_SYSCALL(regs);  // the call's arguments, kept in regs
    struct file* f = FileOf(c.fd);
    if (!NoteFile(f, &c.dev, &c.ino)) return 0;
    c.file = f;
    c.class_id += WriteClass(f, c.class_id / 4 == TRACE_KIND_PWRITEV2 ? SixthArg(regs) : 0);
  }
  Finish(c.file, c.class_id, c.dev, c.ino, c.fd, (__u32)bpf_get_current_pid_tgid(), Tgid(),
         c.start_ns, ns, ret, parts, during, lock, t->commits - c.commits0,
         t->conversions - c.conversions0);
  return 0;
}

// ---- io_uring: writes and syncs, from submission to completion

static __always_inline int UringKind(__u8 op) {
  if (op == bpf_core_enum_value(enum io_uring_op, IORING_OP_WRITE) ||
      op == bpf_core_enum_value(enum io_uring_op, IORING_OP_WRITEV) ||
      op == bpf_core_enum_value(enum io_uring_op, IORING_OP_WRITE_FIXED))
    return TRACE_KIND_URING_WRITE;
  if (op == bpf_core_enum_value(enum io_uring_op, IORING_OP_FSYNC)) return TRACE_KIND_URING_FSYNC;
  if (op == bpf_core_enum_value(enum io_uring_op, IORING_OP_SYNC_FILE_RANGE))
    return TRACE_KIND_URING_SYNC_FILE_RANGE;
  return -1;
}

// The request's file is assigned when it is issued, after this tracepoint
// on current kernels: it is read at the completion.
SEC("tp_btf/io_uring_submit_req")
int BPF_PROG(uring_submit, struct io_kiocb* req) {
  if (!InScope()) return 0;
  const int kind = UringKind(BPF_CORE_READ(req, opcode));
  if (kind < 0) return 0;
  struct ureq u = {};
  u.class_id = (__u32)kind * 4;
  struct trace_totals* t = Totals();
  if (!t) return 0;
  u.commits0 = t->commits;
  u.conversions0 = t->conversions;
  const __u64 id = bpf_get_current_pid_tgid();
  u.tid = (__u32)id;
  u.tgid = id >> 32;
  u.start_ns = bpf_ktime_get_ns();
  __u64 key = (__u64)req;
  if (bpf_map_update_elem(&uring, &key, &u, BPF_ANY) != 0) Count(&t->lost_calls);
  return 0;
}

SEC("tp_btf/io_uring_complete")
int BPF_PROG(uring_complete, struct io_ring_ctx* ring, void* req, struct io_uring_cqe* cqe) {
  __u64 key = (__u64)req;
  struct ureq* in_map = bpf_map_lookup_elem(&uring, &key);
  if (!in_map) return 0;
  struct ureq u = *in_map;
  bpf_map_delete_elem(&uring, &key);
  struct file* f = BPF_CORE_READ((struct io_kiocb*)req, file);
  if (!NoteFile(f, &u.dev, &u.ino)) return 0;
  u.file = f;
  if (u.class_id / 4 == TRACE_KIND_URING_WRITE) u.class_id += WriteClass(f, 0);
  struct trace_totals* t = Totals();
  if (!t) return 0;
  // Not split: no thread waits in the call.
  const __u64 parts[SPLIT_PARTS] = {}, during[SPLIT_OVERLAPS] = {};
  Finish(u.file, u.class_id, u.dev, u.ino, -1, u.tid, u.tgid, u.start_ns,
         bpf_ktime_get_ns() - u.start_ns, BPF_CORE_READ(cqe, res), parts, during, &no_lock_waits,
         t->commits - u.commits0, t->conversions - u.conversions0);
  return 0;
}
