// SPDX-License-Identifier: MIT
// What libwritelab-run.so says to writelab, on any bytes (a program under
// `writelab run` can write anything to the pipe's descriptor): the reader
// never crashes, a record it accepts has a process id in range, a path
// without a NUL and, under paced, no more unmet flushes than flushes, and no
// line it takes is longer than a record can be.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "program/run/records.h"
#include "shim/protocol.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  writelab::ShimRecordReader reader;
  std::vector<writelab::ShimRecord> records;
  std::vector<std::string> errors;
  // In two pieces, as a pipe may deliver them.
  reader.Feed(bytes.substr(0, size / 2), records, errors);
  reader.Feed(bytes.substr(size / 2), records, errors);
  for (const writelab::ShimRecord& r : records) {
    if (r.pid <= 0 || r.pid > 4194304) __builtin_trap();
    if (r.path.find('\0') != std::string::npos) __builtin_trap();
    if (r.path.size() > writelab::run_protocol::kMaxRecord) __builtin_trap();
    if (r.paced && r.paced->unmet > r.paced->flushes) __builtin_trap();
  }
  (void)writelab::ParseShimRecord(bytes);
  return 0;
}
