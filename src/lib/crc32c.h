// SPDX-License-Identifier: MIT
// CRC-32C (Castagnoli, as iSCSI, ext4 and btrfs use): the checksum of
// RecordWriter's framing. With SSE 4.2 where the CPU has it, else a table.
#pragma once

#include <cstddef>
#include <cstdint>

namespace writelab {

// Extends crc (0 to start) over n bytes: Crc32c(Crc32c(0, a), b) is the
// checksum of a followed by b.
uint32_t Crc32c(uint32_t crc, const void* data, size_t n);
// The table version, whatever the CPU (for tests).
uint32_t Crc32cPortable(uint32_t crc, const void* data, size_t n);

}  // namespace writelab
