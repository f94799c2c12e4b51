// SPDX-License-Identifier: MIT
// The result document as CSV for spreadsheets: one line per figure of each
// row (long form), with its unit and its summary over trials.
#pragma once

#include <string>

#include "core/result.h"

namespace writelab {

std::string RenderCsv(const Document& doc);

// One CSV field: as it is, or quoted (with its quotes doubled) when it holds
// a comma, a quote or a newline.
std::string CsvField(const std::string& s);

}  // namespace writelab
