// SPDX-License-Identifier: MIT
// The block layer as both BPF programs read it (explain.bpf.c for
// --explain, trace.bpf.c for `writelab explain -- CMD`): a disk's device
// number in the kernel's encoding, and whether a request is a write or a
// cache flush (REQ_OP_FLUSH, or a write with FUA). Included after
// vmlinux.h and the libbpf helpers.
#pragma once

static __always_inline __u32 KernelDevOfDisk(struct gendisk* disk) {
  if (!disk) return 0;
  return (BPF_CORE_READ(disk, major) << 20) | BPF_CORE_READ(disk, first_minor);
}

static __always_inline __u32 DiskDev(struct request* rq) {
  return KernelDevOfDisk(BPF_CORE_READ(rq, q, disk));
}

// What a write bio carries, by its first page (a large folio's head): a
// file's page cache, the block device's own pages (bdevfs: metadata, a
// journal), or user memory (direct I/O, no mapping). Both programs charge
// a bio to a culprit from this.
#define BDEVFS_MAGIC_NR 0x62646576
enum bio_owner { BIO_USER_MEMORY, BIO_BLOCK_DEVICE, BIO_FILE };

static __always_inline enum bio_owner BioOwner(struct bio* bio, struct inode** file) {
  struct page* page = BPF_CORE_READ(bio, bi_io_vec, bv_page);
  const unsigned long head = BPF_CORE_READ(page, compound_head);
  if (head & 1) page = (struct page*)(head - 1);
  const unsigned long mapping = (unsigned long)BPF_CORE_READ(page, mapping);
  if (!mapping || (mapping & 3)) return BIO_USER_MEMORY;  // or an anonymous page
  struct inode* host = BPF_CORE_READ((struct address_space*)mapping, host);
  if (BPF_CORE_READ(host, i_sb, s_magic) == BDEVFS_MAGIC_NR) return BIO_BLOCK_DEVICE;
  *file = host;
  return BIO_FILE;
}

static __always_inline int IsWrite(__u32 opf) { return (opf & 0xff) == 1; /* REQ_OP_WRITE */ }

static __always_inline int IsFlush(__u32 opf) {
  const __u32 fua = 1u << bpf_core_enum_value(enum req_flag_bits, __REQ_FUA);
  return (opf & 0xff) == 2 /* REQ_OP_FLUSH */ || (opf & fua);
}
