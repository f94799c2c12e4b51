// SPDX-License-Identifier: MIT
// The parts of `writelab explain -- CMD`'s tracer that do not need libbpf.
#include "explain/tracer.h"

#include <algorithm>
#include <cstring>

namespace writelab {

const char* TracePartName(TracePart p) {
  switch (p) {
    case TracePart::kCalls:
      return "write and sync calls";
    case TracePart::kSplit:
      return "the split of a call (the scheduler's switches and wake-ups)";
    case TracePart::kOverlap:
      return "what the disk did meanwhile (block requests)";
    case TracePart::kJournal:
      return "journal commits";
    case TracePart::kConversions:
      return "extent conversions";
    case TracePart::kUring:
      return "io_uring operations";
    case TracePart::kBlame:
      return "who made a call wait (the writes queued to the disks, by process)";
    case TracePart::kLocks:
      return "who held the locks a call waited for (the kernel's lock contention)";
  }
  return "?";
}

const char* TraceKindName(uint32_t kind) {
  static constexpr const char* kNames[TRACE_KINDS] = {"write",          "pwrite64",
                                                      "writev",         "pwritev",
                                                      "pwritev2",       "fsync",
                                                      "fdatasync",      "sync_file_range",
                                                      "msync",          "syncfs",
                                                      "sync",           "io_uring write",
                                                      "io_uring fsync", "io_uring sync_file_range"};
  return kind < TRACE_KINDS ? kNames[kind] : "?";
}

bool ReadChargeRecord(const void* data, size_t size, TraceCharges& out) {
  out = TraceCharges{};
  if (size < TRACE_CHARGE_HEAD) return false;
  std::memcpy(&out, data, TRACE_CHARGE_HEAD);
  const size_t held = (std::min(size, sizeof out) - TRACE_CHARGE_HEAD) / sizeof(trace_charge);
  if (out.n > held) {
    out = TraceCharges{};
    return false;
  }
  std::memcpy(out.e, static_cast<const char*>(data) + TRACE_CHARGE_HEAD,
              out.n * sizeof(trace_charge));
  return true;
}

}  // namespace writelab
