// SPDX-License-Identifier: MIT
// Who held the lock a call waited for (trace.bpf.c; docs/explain.md, "Who
// made it wait"): the kernel's lock:contention_begin/end, for the threads
// of timed calls only. At a wait's begin the lock's holder is read from the
// lock itself (a rw_semaphore's or a mutex's owner: the task, with flag
// bits below it); at its end, the other sleep counted since the begin is
// the wait's, added to the call's split_lock and to its holder's there. A
// holder that is a flusher (a kernel thread writing a file back) stands for
// whoever dirtied that file: the file each one writes back now is kept from
// the writeback tracepoints. Included by trace.bpf.c after split.bpf.h and
// blame.bpf.h.
#pragma once

// The flags of lock:contention_begin (include/trace/events/lock.h).
#define LOCK_F_SPIN (1u << 0)
#define LOCK_F_READ (1u << 1)
#define LOCK_F_WRITE (1u << 2)
#define LOCK_F_RT (1u << 3)
#define LOCK_F_PERCPU (1u << 4)
#define LOCK_F_MUTEX (1u << 5)
#define LOCK_OWNER_FLAGS 0x7ul  // the owner's low bits (rwsem.c, mutex.c)
#define LOCK_READER_OWNED 0x1ul

// Threads of timed calls in a lock wait now: most contention ends (a
// spinlock's, anyone's) are then left at once.
__u64 lock_waiting = 0;

// The file each kernel thread is writing back now, by thread id, from
// writeback_single_inode_start to its end: a lock such a thread holds is
// held on behalf of that file's dirtier (blame_dirtiers). A full map leaves
// the thread itself named, as before.
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 1024);
  __type(key, __u32);
  __type(value, struct blame_file);
} lock_flushing SEC(".maps");

SEC("tp_btf/writeback_single_inode_start")
int BPF_PROG(lock_flush_start, struct inode* inode) {
  struct task_struct* task = bpf_get_current_task_btf();
  if (!(task->flags & PF_KTHREAD_BIT)) return 0;
  const __u32 tid = task->pid;
  struct blame_file f = {BPF_CORE_READ(inode, i_sb, s_dev), 0, BPF_CORE_READ(inode, i_ino)};
  bpf_map_update_elem(&lock_flushing, &tid, &f, BPF_ANY);
  return 0;
}

SEC("tp_btf/writeback_single_inode")
int BPF_PROG(lock_flush_end, struct inode* inode) {
  struct task_struct* task = bpf_get_current_task_btf();
  if (!(task->flags & PF_KTHREAD_BIT)) return 0;
  const __u32 tid = task->pid;
  bpf_map_delete_elem(&lock_flushing, &tid);
  return 0;
}

// A holder that is a kernel thread writing a file back: out names that
// file's last dirtier instead, where it is known.
static __always_inline void LockFlusher(struct task_struct* task, struct split_lock_holder* out) {
  if (!(BPF_CORE_READ(task, flags) & PF_KTHREAD_BIT)) return;
  const __u32 tid = BPF_CORE_READ(task, pid);
  struct blame_file* f = bpf_map_lookup_elem(&lock_flushing, &tid);
  struct blame_dirtier* d = f ? bpf_map_lookup_elem(&blame_dirtiers, f) : 0;
  if (!d) return;
  out->holder = SPLIT_LOCK_FLUSHER;
  out->tgid = d->tgid;
  __builtin_memcpy(out->comm, d->comm, sizeof out->comm);
}

// Who holds lock, from its owner word: a task, or readers, or unseen.
static __always_inline void LockHolder(void* lock, __u32 flags, struct split_lock_holder* out) {
  out->holder = SPLIT_LOCK_UNSEEN;
  out->tgid = 0;
  out->comm[0] = 0;
  if (flags & (LOCK_F_RT | LOCK_F_PERCPU)) return;
  // A kernel built with PREEMPT_RT has other locks under these names, with
  // no owner word of this shape: no holder is read there.
  unsigned long owner = 0;
  if (flags & LOCK_F_MUTEX) {
    if (!bpf_core_field_exists(((struct mutex*)0)->owner)) return;
    owner = BPF_CORE_READ((struct mutex*)lock, owner.counter);
  } else if (flags & (LOCK_F_READ | LOCK_F_WRITE)) {
    if (!bpf_core_field_exists(((struct rw_semaphore*)0)->owner)) return;
    owner = BPF_CORE_READ((struct rw_semaphore*)lock, owner.counter);
  } else {
    return;
  }
  if (!(flags & LOCK_F_MUTEX) && (owner & LOCK_READER_OWNED)) {
    // The owner word keeps the last reader to take it, who may have let
    // it go (and exited) since: not named.
    out->holder = SPLIT_LOCK_READERS;
    return;
  }
  struct task_struct* task = (struct task_struct*)(owner & ~LOCK_OWNER_FLAGS);
  if (!task) return;
  out->holder = SPLIT_LOCK_HELD;
  out->tgid = BPF_CORE_READ(task, tgid);
  bpf_probe_read_kernel_str(out->comm, sizeof out->comm, &task->comm);
  LockFlusher(task, out);
}

// A thread is about to wait for a contended lock. The spinning a mutex
// tries first (SPIN) is on its CPU; its sleep begins again without SPIN.
// A spinlock's wait (SPIN) returns before the thread's storage is looked
// up: that lookup takes a lock of its own, which may be the one spun on.
SEC("tp_btf/contention_begin")
int BPF_PROG(lock_begin, void* lock, unsigned int flags) {
  if (flags & LOCK_F_SPIN) return 0;
  struct task_struct* task = bpf_get_current_task_btf();
  struct split_thread* t = bpf_task_storage_get(&split_threads, task, 0, 0);
#ifdef SPLIT_LAZY
  __u64 now = 0;
  if (!t || !t->active) t = SplitLazy(task, &now);
#endif
  if (!t || !t->active) return 0;
  if (!t->lock_at) __sync_fetch_and_add(&lock_waiting, 1);
  t->lock_at = (__u64)lock;
  t->lock_other0 = t->part_ns[SPLIT_OTHER];
  LockHolder(lock, flags, &t->lock_now);
  return 0;
}

// A wait of ns held by who, added to lock's holders: to who's slot, or a
// free one, or in place of the holder with the least time if that is less.
static __always_inline void LockHeld(struct split_lock* lock, const struct split_lock_holder* who,
                                     __u64 ns) {
  int least = 0;
  for (int i = 0; i < SPLIT_LOCK_HOLDERS; ++i) {
    struct split_lock_holder* h = &lock->held[i];
    if (!h->ns) {
      *h = *who;
      h->ns = ns;
      return;
    }
    if (h->holder == who->holder && h->tgid == who->tgid) {
      h->ns += ns;
      return;
    }
    if (h->ns < lock->held[least].ns) least = i;
  }
  if (lock->held[least].ns >= ns) return;
  lock->held[least] = *who;
  lock->held[least].ns = ns;
}

// The wait ends (the lock taken, or given up on a signal): its other sleep
// is added to the call's, and to its holder's where one was seen.
SEC("tp_btf/contention_end")
int BPF_PROG(lock_end, void* lock, int ret) {
  if (!lock_waiting) return 0;
  struct split_thread* t = bpf_task_storage_get(&split_threads, bpf_get_current_task_btf(), 0, 0);
  if (!t || t->lock_at != (__u64)lock) return 0;
  t->lock_at = 0;
  __sync_fetch_and_add(&lock_waiting, -1);
  if (!t->active) return 0;
  const __u64 other = t->part_ns[SPLIT_OTHER];
  const __u64 slept = other > t->lock_other0 ? other - t->lock_other0 : 0;
  if (!slept) return 0;
  t->lock.wait_ns += slept;
  if (t->lock_now.holder != SPLIT_LOCK_UNSEEN) LockHeld(&t->lock, &t->lock_now, slept);
  return 0;
}
