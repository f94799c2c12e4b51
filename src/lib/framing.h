// SPDX-License-Identifier: MIT
// The record framing of RecordFraming::kLengthCrc32c (writelab/log_reader.h
// documents the layout): shared by RecordWriter and LogReader.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "lib/crc32c.h"

namespace writelab {

inline constexpr size_t kFrameHeader = 8;

struct FrameHeader {
  uint32_t length = 0;
  uint32_t crc = 0;
};

inline void PutLe32(std::byte* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::byte>(v >> (8 * i));
}

inline uint32_t GetLe32(const std::byte* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(p[i]) << (8 * i);
  return v;
}

// CRC-32C of the length field (4 bytes at length_le) and the payload.
inline uint32_t FrameChecksum(const std::byte* length_le, const std::byte* payload, size_t n) {
  return Crc32c(Crc32c(0, length_le, 4), payload, n);
}

// Fills the 8-byte header for payload[0..n), n < 2^32.
inline void EncodeFrameHeader(std::byte* header, const std::byte* payload, uint32_t n) {
  PutLe32(header, n);
  PutLe32(header + 4, FrameChecksum(header, payload, n));
}

inline FrameHeader DecodeFrameHeader(const std::byte* header) {
  return {GetLe32(header), GetLe32(header + 4)};
}

}  // namespace writelab
