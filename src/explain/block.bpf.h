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

static __always_inline int IsWrite(__u32 opf) { return (opf & 0xff) == 1; /* REQ_OP_WRITE */ }

static __always_inline int IsFlush(__u32 opf) {
  const __u32 fua = 1u << bpf_core_enum_value(enum req_flag_bits, __REQ_FUA);
  return (opf & 0xff) == 2 /* REQ_OP_FLUSH */ || (opf & fua);
}
