// SPDX-License-Identifier: MIT
// Text broken at spaces into lines of a width: `--help` and the survey's
// brief output. A word longer than the room stays whole; a line's own
// breaks are kept, and the continuation lines of an indented line (a list's
// item) get its indent and two more.
#pragma once

#include <cstddef>
#include <string>

namespace writelab {

std::string WrapText(const std::string& text, std::size_t width);

}  // namespace writelab
