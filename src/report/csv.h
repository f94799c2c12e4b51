// SPDX-License-Identifier: MIT
// The result document as CSV for spreadsheets: one line per figure of each
// row (long form), with its unit and its summary over trials.
#pragma once

#include <string>

#include "core/result.h"

namespace writelab {

std::string RenderCsv(const Document& doc);

}  // namespace writelab
