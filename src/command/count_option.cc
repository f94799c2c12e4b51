// SPDX-License-Identifier: MIT
#include "command/count_option.h"

#include <CLI/CLI.hpp>

#include <string>

#include "core/units.h"

namespace writelab {

CLI::Validator Count(uint64_t min, uint64_t max) {
  std::string range = std::to_string(min) + " to " + std::to_string(max);
  return CLI::Validator(
      [min, max, range](std::string& text) -> std::string {
        const bool negative = text.size() > 1 && text[0] == '-' &&
                              text.find_first_not_of("0123456789", 1) == std::string::npos;
        if (negative) return "must be at least " + std::to_string(min);
        auto n = ParseCount(text);
        if (!n && n.error().ends_with("is not a whole number"))
          return n.error() + " (" + range + ")";
        if (n && *n < min) return "must be at least " + std::to_string(min);
        if (n && *n > max) return "must be at most " + std::to_string(max);
        if (!n) return Quoted(text) + " is out of range (" + range + ")";
        return {};
      },
      range);
}

}  // namespace writelab
