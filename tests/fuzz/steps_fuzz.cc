// SPDX-License-Identifier: MIT
// ParseSteps on any text: never crashes, and what it accepts is within the
// documented bounds (1..kMaxStep, at most kMaxSteps steps).
#include <cstddef>
#include <cstdint>
#include <string>

#include "experiments/stride/stride.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto steps = writelab::ParseSteps(text);
  if (!steps) return 0;
  if (steps->empty() || steps->size() > writelab::kMaxSteps) __builtin_trap();
  for (uint64_t s : *steps)
    if (s < 1 || s > writelab::kMaxStep) __builtin_trap();
  return 0;
}
