// SPDX-License-Identifier: MIT
// Who made a call wait (trace.bpf.c; docs/explain.md, "Who made it wait"):
// every write queued to a watched disk is charged to a culprit, and the
// charges are sent in windows (trace_counters.h, TRACE_EVENT_CHARGE).
//
// The culprit of a write: for a file's page cache page, the process that
// last dirtied a page of that file (remembered per file when a page turns
// dirty, whoever writes it back later: a flusher thread, the journal, the
// program's own fsync); for user memory (direct I/O), the process issuing
// it; for the block device's own pages, the journal (from its thread) or
// metadata. Included by trace.bpf.c after its maps and helpers (OnDisk,
// OnFs, Totals, journal_threads, events).
#pragma once

#define PF_KTHREAD_BIT 0x00200000

// The last process to dirty a page of a file, per (file system, inode).
struct blame_file {
  __u32 dev, pad;
  __u64 ino;
};
struct blame_dirtier {
  __u32 tgid, pad;
  char comm[16];
};

struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, 65536);
  __type(key, struct blame_file);
  __type(value, struct blame_dirtier);
} blame_dirtiers SEC(".maps");

// This CPU's last (file, process) seen dirtying: a stream of pages of one
// file by one writer costs one lookup here, not a hash update per page.
// It also gathers the bytes that writer dirtied (pending) until the writer
// or file changes, or 256 KiB: charged then, to the file system's window
// of pages dirtied.
struct blame_last {
  __u64 mapping;
  __u32 tgid, dev;  // dev 0: a file system not watched
  __u64 ino, pending;
  char comm[16];
};
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct blame_last);
} blame_last SEC(".maps");

// Bytes charged, per group and culprit, until the window closes
// (trace_counters.h): a window's close reads its group's slots, whatever
// else is open (a walk of a hash map of every group's charges cost a
// flush about 3 us).
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, TRACE_BLAME_GROUPS);
  __type(key, __u32);
  __type(value, struct trace_blame_group);
} blame_groups SEC(".maps");

// Each group's index in blame_groups, by (domain << 8 | kind), given out in
// order as groups are first charged.
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, TRACE_BLAME_GROUPS);
  __type(key, __u64);
  __type(value, __u32);
} blame_group_of SEC(".maps");
__u32 blame_groups_used = 0;

// The group of (domain, kind), given an index on first sight when create;
// null when there is none (or no index is left: its charges are lost,
// counted by the caller).
static __always_inline struct trace_blame_group* BlameGroup(__u32 domain, __u32 kind, int create) {
  const __u64 key = ((__u64)domain << 8) | kind;
  __u32* at = bpf_map_lookup_elem(&blame_group_of, &key);
  if (!at && create) {
    const __u32 n = __sync_fetch_and_add(&blame_groups_used, 1);
    if (n >= TRACE_BLAME_GROUPS) return 0;
    bpf_map_update_elem(&blame_group_of, &key, &n, BPF_NOEXIST);  // or another CPU's first
    at = bpf_map_lookup_elem(&blame_group_of, &key);
  }
  return at ? bpf_map_lookup_elem(&blame_groups, at) : 0;
}

// When each watched file system's open window of pages dirtied began.
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 64);
  __type(key, __u32);
  __type(value, struct trace_blame_window);
} blame_dirty_windows SEC(".maps");

// The page size (set by user space before loading).
const volatile __u32 blame_page_size = 4096;

// When each disk's open window began.
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 64);
  __type(key, __u32);
  __type(value, struct trace_blame_window);
} blame_windows SEC(".maps");

// Per CPU, the record being filled (busy while it is: a program that
// interrupts another on this CPU leaves its window for later).
struct blame_scratch {
  __u32 busy, pad;
  struct trace_charge_event e;
};
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct blame_scratch);
} blame_scratch SEC(".maps");

static __always_inline void BlameCurrent(struct trace_blame_key* k, struct trace_blame_val* v) {
  struct task_struct* task = bpf_get_current_task_btf();
  if (task->flags & PF_KTHREAD_BIT) {
    k->cause = TRACE_CAUSE_UNKNOWN;
    return;
  }
  k->cause = TRACE_CAUSE_PROCESS;
  k->tgid = bpf_get_current_pid_tgid() >> 32;
  bpf_get_current_comm(v->comm, sizeof v->comm);
}

// The culprit of a write bio, from its first page.
static __always_inline void BlameCulprit(struct bio* bio, struct trace_blame_key* k,
                                         struct trace_blame_val* v) {
  struct inode* host = 0;
  const enum bio_owner owner = BioOwner(bio, &host);
  if (owner == BIO_USER_MEMORY) {  // direct I/O: its issuer
    BlameCurrent(k, v);
    return;
  }
  if (owner == BIO_BLOCK_DEVICE) {
    const __u32 tid = (__u32)bpf_get_current_pid_tgid();
    k->cause =
        bpf_map_lookup_elem(&journal_threads, &tid) ? TRACE_CAUSE_JOURNAL : TRACE_CAUSE_METADATA;
    return;
  }
  struct blame_file f = {BPF_CORE_READ(host, i_sb, s_dev), 0, BPF_CORE_READ(host, i_ino)};
  k->dev = f.dev;
  k->ino = f.ino;
  struct blame_dirtier* d = bpf_map_lookup_elem(&blame_dirtiers, &f);
  if (!d) {
    BlameCurrent(k, v);
    return;
  }
  k->cause = TRACE_CAUSE_PROCESS;
  k->tgid = d->tgid;
  __builtin_memcpy(v->comm, d->comm, sizeof v->comm);
}

static __always_inline int BlameSameCulprit(const struct trace_blame_key* a,
                                            const struct trace_blame_key* b) {
  return a->cause == b->cause && a->tgid == b->tgid && a->dev == b->dev && a->ino == b->ino;
}

// Adds bytes to k's slot of its group, or claims a free one for it, or
// adds them to the group's rest. Two CPUs seeing a new culprit at once
// may each claim a slot for it: user space sums a window's slots by
// culprit.
static __always_inline void BlameAdd(const struct trace_blame_key* k,
                                     const struct trace_blame_val* v, __u64 bytes) {
  struct trace_blame_group* g = BlameGroup(k->domain, k->kind, 1);
  if (!g) {
    struct trace_totals* t = Totals();
    if (t) __sync_fetch_and_add(&t->charges_lost, bytes);
    return;
  }
  int free_at = -1;
  for (int i = 0; i < TRACE_CHARGE_ENTRIES; ++i) {
    struct trace_blame_slot* s = &g->s[i];
    const __u32 state = s->state;
    if (state == TRACE_SLOT_READY && BlameSameCulprit(&s->key, k)) {
      __sync_fetch_and_add(&s->val.bytes, bytes);
      return;
    }
    if (state == TRACE_SLOT_FREE && free_at < 0) free_at = i;
  }
  if (free_at >= 0 && free_at < TRACE_CHARGE_ENTRIES) {
    struct trace_blame_slot* s = &g->s[free_at];
    if (__sync_val_compare_and_swap(&s->state, TRACE_SLOT_FREE, TRACE_SLOT_CLAIMED) ==
        TRACE_SLOT_FREE) {
      s->key = *k;
      __builtin_memcpy(s->val.comm, v->comm, sizeof s->val.comm);
      // Bytes a late add left in the slot after its close freed it: the
      // group's rest, not this culprit's.
      const __u64 left = __sync_lock_test_and_set(&s->val.bytes, bytes);
      if (left) __sync_fetch_and_add(&g->rest_bytes, left);
      __sync_lock_test_and_set(&s->state, TRACE_SLOT_READY);
      return;
    }
  }
  __sync_fetch_and_add(&g->rest_bytes, bytes);
}

// Moves the group's charges into record e and empties them: each named
// culprit's bytes, and the rest. Every slot is freed: the next window
// names the first culprits charged in it.
static __always_inline void BlameTake(struct trace_blame_group* g, struct trace_charge_event* e) {
  for (int i = 0; i < TRACE_CHARGE_ENTRIES; ++i) {
    struct trace_blame_slot* s = &g->s[i];
    if (s->state != TRACE_SLOT_READY) continue;
    const __u32 n = e->n;
    if (n >= TRACE_CHARGE_ENTRIES) break;
    // The culprit is read before the slot is freed: another CPU may claim
    // it at once.
    struct trace_charge* c = &e->e[n];
    c->tgid = s->key.tgid;
    c->cause = s->key.cause;
    c->dev = s->key.dev;
    c->ino = s->key.ino;
    __builtin_memcpy(c->comm, s->val.comm, sizeof c->comm);
    c->bytes = __sync_lock_test_and_set(&s->val.bytes, 0);
    __sync_val_compare_and_swap(&s->state, TRACE_SLOT_READY, TRACE_SLOT_FREE);
    if (c->bytes) e->n = n + 1;
  }
  e->rest_bytes = __sync_lock_test_and_set(&g->rest_bytes, 0);
  e->done_bytes = __sync_lock_test_and_set(&g->done_bytes, 0);
}

// Sends what was charged to a window or commit (commit: its state, else 0)
// from t0 to t1 and empties it.
static __always_inline void BlameClose(__u32 domain, __u32 kind, __u32 flush, __u64 t0, __u64 t1,
                                       const struct split_commit* commit) {
  __u32 zero = 0;
  struct blame_scratch* s = bpf_map_lookup_elem(&blame_scratch, &zero);
  if (!s || s->busy) return;
  s->busy = 1;
  s->e.type = TRACE_EVENT_CHARGE;
  s->e.kind = kind;
  s->e.dev = domain;
  s->e.flush = flush;
  s->e.t0 = t0;
  s->e.t1 = t1;
  s->e.n = 0;
  s->e.rest_bytes = 0;
  s->e.done_bytes = 0;
  s->e.tid = commit ? commit->tid : 0;
  s->e.locked_ns = commit ? commit->locked_ns : 0;
  s->e.unlocked_ns = commit ? commit->unlocked_ns : 0;
  if (commit)
    s->e.handle = commit->handle;
  else
    __builtin_memset(&s->e.handle, 0, sizeof s->e.handle);
  struct trace_blame_group* g = BlameGroup(domain, kind, 0);
  if (g) BlameTake(g, &s->e);
  if (s->e.n || s->e.rest_bytes || s->e.done_bytes || flush || s->e.locked_ns) {
    // Only the entries filled (a culprit or two: 160 or 208 bytes, where a
    // whole record is 880): the copy into the ring is on a flush's issue,
    // and the ring (8 bytes of header a record) holds 4 to 5 times as many
    // windows before it is full.
    __u32 n = s->e.n;
    if (n > TRACE_CHARGE_ENTRIES) n = TRACE_CHARGE_ENTRIES;
    const __u64 size = TRACE_CHARGE_HEAD + (__u64)n * sizeof(struct trace_charge);
    if (bpf_ringbuf_output(&events, &s->e, size, BPF_RB_NO_WAKEUP) != 0) {
      struct trace_totals* t = Totals();
      if (t) __sync_fetch_and_add(&t->lost_events, 1);
    }
  }
  s->busy = 0;
}

// Called before each charge of a disk's window or of a file system's
// window of pages dirtied (a write queued or completed, pages dirtied, a
// flush): a flush ends the open window at now, and a charge
// TRACE_CHARGE_WINDOW_NS or more after it began ends it at its last charge
// (a quiet stretch after that is in no window); the charge begins the
// next. A flush after a quiet stretch ends the window at its last charge
// and sends the flush's own, empty, at now.
static __always_inline void BlameRoll(void* windows, __u32 domain, __u32 kind, __u32 flush,
                                      __u64 now) {
  struct trace_blame_window* w = bpf_map_lookup_elem(windows, &domain);
  if (!w) {
    struct trace_blame_window fresh = {now, now};
    bpf_map_update_elem(windows, &domain, &fresh, BPF_NOEXIST);
    if (flush) BlameClose(domain, kind, flush, now, now, 0);
    return;
  }
  const __u64 began = w->t0, last = w->last > began ? w->last : began;
  if (!flush && now - began < TRACE_CHARGE_WINDOW_NS) {
    w->last = now;
    return;
  }
  if (__sync_val_compare_and_swap(&w->t0, began, now) != began) return;  // another CPU ended it
  w->last = now;
  if (flush && now - last >= TRACE_CHARGE_WINDOW_NS) {
    BlameClose(domain, kind, 0, began, last, 0);
    BlameClose(domain, kind, flush, now, now, 0);
    return;
  }
  BlameClose(domain, kind, flush, began, flush ? now : last, 0);
}

// Write bytes a request on disk completed: they left its queue (a charge
// of its window, which it may end).
static __always_inline void BlameDone(__u32 disk, __u32 bytes) {
  BlameRoll(&blame_windows, disk, TRACE_CHARGE_WINDOW, 0, bpf_ktime_get_ns());
  struct trace_blame_group* g = BlameGroup(disk, TRACE_CHARGE_WINDOW, 1);
  if (g) __sync_fetch_and_add(&g->done_bytes, bytes);
}

SEC("tp_btf/block_bio_queue")
int BPF_PROG(blame_bio, struct bio* bio) {
  if ((BPF_CORE_READ(bio, bi_opf) & 0xff) != 1) return 0;  // REQ_OP_WRITE
  const __u32 bytes = BPF_CORE_READ(bio, bi_iter.bi_size);
  const __u32 disk = KernelDevOfDisk(BPF_CORE_READ(bio, bi_bdev, bd_disk));
  if (!bytes || !OnDisk(disk)) return 0;
  struct trace_blame_key k = {};
  struct trace_blame_val v = {};
  BlameCulprit(bio, &k, &v);
  k.domain = disk;
  k.kind = TRACE_CHARGE_WINDOW;
  BlameRoll(&blame_windows, disk, TRACE_CHARGE_WINDOW, 0, bpf_ktime_get_ns());
  BlameAdd(&k, &v, bytes);
  const __u32 tid = (__u32)bpf_get_current_pid_tgid();
  __u32* fs = bpf_map_lookup_elem(&journal_threads, &tid);
  if (fs && *fs) {  // the journal thread of fs, in or between commits
    k.domain = *fs;
    k.kind = TRACE_CHARGE_COMMIT;
    BlameAdd(&k, &v, bytes);
  }
  return 0;
}

// A folio's bytes: a page, or a large folio's 2^order pages (the order in
// the low byte of _flags_1, where a head page's flags say it is large).
static __always_inline __u64 FolioBytes(struct folio* folio) {
  unsigned long flags = 0;
  bpf_probe_read_kernel(&flags, sizeof flags, folio);  // flags lead struct folio
  if (!bpf_core_field_exists(folio->_flags_1) ||
      !(flags & (1ul << bpf_core_enum_value(enum pageflags, PG_head))))
    return blame_page_size;
  return (__u64)blame_page_size << (BPF_CORE_READ(folio, _flags_1) & 0xff);
}

// Charges what this CPU's last writer dirtied to its file system's window
// (ending the window first where its time is up).
static __always_inline void BlameDirtied(struct blame_last* l) {
  if (!l->pending || !l->dev) return;
  struct trace_blame_key k = {l->dev, TRACE_CHARGE_DIRTY, TRACE_CAUSE_PROCESS, l->tgid, l->dev,
                              l->ino};
  struct trace_blame_val v = {};
  __builtin_memcpy(v.comm, l->comm, sizeof v.comm);
  BlameRoll(&blame_dirty_windows, k.domain, TRACE_CHARGE_DIRTY, 0, bpf_ktime_get_ns());
  BlameAdd(&k, &v, l->pending);
  l->pending = 0;
}

// A page turns dirty: its file's dirtier is remembered, its bytes gathered.
SEC("tp_btf/writeback_dirty_folio")
int BPF_PROG(blame_dirty, struct folio* folio, struct address_space* mapping) {
  __u32 zero = 0;
  struct blame_last* last = bpf_map_lookup_elem(&blame_last, &zero);
  const __u32 tgid = bpf_get_current_pid_tgid() >> 32;
  if (!mapping || !folio || !last) return 0;
  const __u64 bytes = FolioBytes(folio);
  if (last->mapping == (__u64)mapping && last->tgid == tgid) {
    if (last->dev && (last->pending += bytes) >= (256u << 10)) BlameDirtied(last);
    return 0;
  }
  BlameDirtied(last);
  struct inode* host = BPF_CORE_READ(mapping, host);
  struct blame_file f = {BPF_CORE_READ(host, i_sb, s_dev), 0, BPF_CORE_READ(host, i_ino)};
  last->mapping = (__u64)mapping;
  last->tgid = tgid;
  last->dev = OnFs(f.dev) ? f.dev : 0;
  if (!last->dev) return 0;
  last->ino = f.ino;
  last->pending = bytes;
  struct blame_dirtier d = {tgid, 0};
  bpf_get_current_comm(d.comm, sizeof d.comm);
  __builtin_memcpy(last->comm, d.comm, sizeof d.comm);
  bpf_map_update_elem(&blame_dirtiers, &f, &d, BPF_ANY);
  return 0;
}
