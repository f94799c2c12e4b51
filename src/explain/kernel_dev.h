// SPDX-License-Identifier: MIT
// A dev_t as the kernel encodes it inside (MAJOR << 20 | MINOR): the form
// BPF programs read from struct super_block and struct gendisk.
#pragma once

#include <sys/sysmacros.h>
#include <sys/types.h>

#include <cstdint>

namespace writelab {

inline uint32_t KernelDev(dev_t d) { return (major(d) << 20) | minor(d); }
inline dev_t UserDev(uint32_t k) { return makedev(k >> 20, k & 0xfffff); }

}  // namespace writelab
