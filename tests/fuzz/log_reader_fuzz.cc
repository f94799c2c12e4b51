// SPDX-License-Identifier: MIT
// LogReader (what recovery runs on whatever a crash left), two ways, picked
// by the input's first byte:
//   even: any bytes. It never crashes, never reads past the file, and what
//     it accepts adds up: every record is whole, reading on with Resume()
//     covers the file, end-of-file only when the records end exactly at the
//     file's end, and a torn tail only when no valid frame starts after the
//     end (checked here by brute force, an oracle independent of the scan).
//   odd: the recovery property. N valid records built from the input, one
//     byte of record k changed: the reader returns records 0..k-1, calls it
//     corrupt (never a tail) when records follow k, and Resume() reaches
//     every record after k, in order.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "lib/framing.h"
#include "writelab/log_reader.h"

namespace {

using writelab::LogEnd;
using writelab::LogReader;

LogReader ReaderOf(const uint8_t* data, size_t size) {
  writelab::UniqueFd fd(memfd_create("log", MFD_CLOEXEC));
  if (!fd || write(fd.get(), data, size) != static_cast<ssize_t>(size)) __builtin_trap();
  auto reader = LogReader::FromFd(std::move(fd), "fuzz");
  if (!reader) __builtin_trap();
  return std::move(*reader);
}

// Every record, resuming past damage; each as its offset and bytes.
std::vector<std::string> ReadResuming(LogReader& reader, std::vector<uint64_t>* starts) {
  std::vector<std::string> out;
  for (;;) {
    const uint64_t at = reader.end_offset();
    auto next = reader.Next();
    if (!next) __builtin_trap();  // a memfd read does not fail
    if (*next) {
      const auto rec = **next;
      if (rec.empty() || reader.end_offset() != at + 8 + rec.size()) __builtin_trap();
      out.emplace_back(reinterpret_cast<const char*>(rec.data()), rec.size());
      starts->push_back(at);
      continue;
    }
    if (reader.end_reason() == LogEnd::kNotYet) __builtin_trap();
    if (!reader.Resume()) return out;
    if (reader.end_offset() <= at) __builtin_trap();  // progress
  }
}

bool ValidFrameAt(const uint8_t* data, size_t size, size_t q) {
  if (q + 8 > size) return false;
  const auto* p = reinterpret_cast<const std::byte*>(data + q);
  const writelab::FrameHeader h = writelab::DecodeFrameHeader(p);
  return h.length > 0 && h.length <= size - q - 8 &&
         writelab::FrameChecksum(p, p + 8, h.length) == h.crc;
}

void AnyBytes(const uint8_t* data, size_t size) {
  LogReader reader = ReaderOf(data, size);
  std::vector<uint64_t> starts;
  ReadResuming(reader, &starts);
  const auto why = reader.end_reason();
  if ((why == LogEnd::kEndOfFile) != (reader.end_offset() == size)) __builtin_trap();
  if (reader.end_offset() > size) __builtin_trap();
  if (reader.TornTail())
    for (size_t q = reader.end_offset() + 1; q < size; ++q)
      if (ValidFrameAt(data, size, q)) __builtin_trap();  // called a tail, yet valid follows
  if (reader.Next() && reader.end_reason() != why) __builtin_trap();  // stays ended
}

void OneDamagedByte(const uint8_t* data, size_t size) {
  if (size < 4) return;
  const size_t n = 2 + data[1] % 14;  // records
  const size_t victim_pos = static_cast<size_t>(data[2]) << 8 | data[3];
  data += 4;
  size -= 4;
  std::vector<uint8_t> log;
  std::vector<std::string> want;
  std::vector<size_t> start;
  for (size_t i = 0, at = 0; i < n; ++i) {
    const size_t len = 1 + (size ? data[at++ % size] % 40 : i);
    std::string payload;
    for (size_t j = 0; j < len; ++j)
      payload.push_back(static_cast<char>(size ? data[at++ % size] : j));
    std::byte header[8];
    writelab::EncodeFrameHeader(header, reinterpret_cast<const std::byte*>(payload.data()),
                                static_cast<uint32_t>(len));
    start.push_back(log.size());
    log.insert(log.end(), reinterpret_cast<uint8_t*>(header),
               reinterpret_cast<uint8_t*>(header) + 8);
    log.insert(log.end(), payload.begin(), payload.end());
    want.push_back(payload);
  }
  const size_t victim = victim_pos % log.size();
  log[victim] ^= static_cast<uint8_t>(1 + (size ? data[0] % 255 : 0));
  size_t k = 0;
  while (k + 1 < n && start[k + 1] <= victim) ++k;

  LogReader reader = ReaderOf(log.data(), log.size());
  std::vector<uint64_t> starts;
  const auto got = ReadResuming(reader, &starts);
  for (size_t i = 0; i < k; ++i)
    if (i >= got.size() || got[i] != want[i] || starts[i] != start[i]) __builtin_trap();
  LogReader first = ReaderOf(log.data(), log.size());
  while (first.Next().value()) {
  }
  if (first.records() != k || first.end_offset() != start[k]) __builtin_trap();
  if (first.damage().offset != start[k]) __builtin_trap();  // found where it is
  if (k + 1 < n) {
    if (first.TornTail()) __builtin_trap();  // records follow: never a tail
    // Every record after k, in order, is among what resuming read.
    size_t j = k;
    for (size_t i = k + 1; i < n; ++i) {
      while (j < got.size() && !(starts[j] == start[i] && got[j] == want[i])) ++j;
      if (j == got.size()) __builtin_trap();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  if (data[0] % 2 == 0)
    AnyBytes(data + 1, size - 1);
  else
    OneDamagedByte(data, size);
  return 0;
}
