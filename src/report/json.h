// SPDX-License-Identifier: MIT
// The result document as JSON (schema version 1, docs/results.md), both
// ways: writing for --json, reading for `report`, `compare` and tests.
#pragma once

#include <expected>
#include <string>

#include "core/result.h"

namespace writelab {

std::string ToJson(const Document& doc);
std::expected<Document, std::string> FromJson(const std::string& text);

}  // namespace writelab
