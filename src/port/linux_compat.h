// SPDX-License-Identifier: MIT
// Kernel interfaces newer than Debian 12's headers (linux-libc-dev 6.1).
// Values are the kernel's ABI; whether the running kernel has them is probed
// at run time, never assumed.
#pragma once

#include <sys/syscall.h>
#include <sys/uio.h>

#include <cstdint>

#ifndef RWF_DONTCACHE
#define RWF_DONTCACHE 0x00000080  // uncached buffered I/O, Linux 6.14
#endif

#ifndef SYS_cachestat
#define SYS_cachestat 451  // Linux 6.5, same number on every architecture
#endif

#ifndef FALLOC_FL_WRITE_ZEROES
#define FALLOC_FL_WRITE_ZEROES 0x80  // Linux 6.17
#endif

namespace writelab {

struct CachestatRange {
  uint64_t off;
  uint64_t len;  // 0 means to the end of the file
};

struct Cachestat {
  uint64_t nr_cache;
  uint64_t nr_dirty;
  uint64_t nr_writeback;
  uint64_t nr_evicted;
  uint64_t nr_recently_evicted;
};

}  // namespace writelab
