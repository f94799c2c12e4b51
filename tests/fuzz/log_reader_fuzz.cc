// SPDX-License-Identifier: MIT
// LogReader (what recovery runs on whatever a crash left) on any bytes:
// never crashes, never reads past the file, and what it accepts adds up:
// every record is whole (its header and payload end at end_offset), and it
// says end-of-file only when the records end exactly at the file's end.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>

#include "writelab/log_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  writelab::UniqueFd fd(memfd_create("log", MFD_CLOEXEC));
  if (!fd || write(fd.get(), data, size) != static_cast<ssize_t>(size)) return 0;
  auto reader = writelab::LogReader::FromFd(std::move(fd), "fuzz");
  if (!reader) __builtin_trap();
  uint64_t end = 0, records = 0;
  for (;;) {
    auto next = reader->Next();
    if (!next) __builtin_trap();  // a memfd read does not fail
    if (!*next) break;
    const auto rec = **next;
    if (rec.empty()) __builtin_trap();
    end += 8 + rec.size();
    ++records;
  }
  if (reader->end_offset() != end || reader->records() != records || end > size) __builtin_trap();
  const auto why = reader->end_reason();
  if (why == writelab::LogEnd::kNotYet) __builtin_trap();
  if ((why == writelab::LogEnd::kEndOfFile) != (end == size)) __builtin_trap();
  if (reader->Next() && reader->end_reason() != why) __builtin_trap();  // stays ended
  return 0;
}
