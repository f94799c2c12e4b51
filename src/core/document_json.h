// SPDX-License-Identifier: MIT
// The result document as JSON (schema version 1, docs/results.md), both
// ways: writing for --json, reading for `report`, `compare` and tests.
#pragma once

#include <expected>
#include <optional>
#include <string>

#include "core/memory_room.h"
#include "core/result.h"

namespace writelab {

// What a document may hold, at most: what a run can produce (docs/results.md,
// "Limits"), so that reading a crafted file cannot take memory or time out
// of proportion. A file beyond them is refused with the limit named.
inline constexpr size_t kMaxDocumentValues = 16'000'000;  // JSON values in all
inline constexpr size_t kMaxArrayLength = 1'000'000;      // fsync's --count: a point per iteration
inline constexpr size_t kMaxDocumentDepth = 32;           // nesting of arrays and objects
inline constexpr size_t kMaxSamples = 1000;               // per figure: --rounds is at most 1000
// What one parsed JSON value costs in memory, about (nlohmann::json in a
// std::map or std::vector, measured on a 40 MB document of points).
inline constexpr uint64_t kBytesPerValue = 128;

std::string ToJson(const Document& doc);
// Counts the document's values first (a SAX pass, no tree), refuses one
// beyond the limits above or, given the room there is (AvailableMemory(),
// telemetry/memory_budget.h: a file from a user), one whose tree would not
// fit in it; then reads and checks every field.
std::expected<Document, std::string> FromJson(const std::string& text,
                                              const std::optional<MemoryRoom>& room = std::nullopt);

}  // namespace writelab
