#include "cli/count_option.h"

#include <string>

#include "core/units.h"

namespace writelab {

CLI::Validator Count(uint64_t min, uint64_t max) {
  std::string range = std::to_string(min) + " to " + std::to_string(max);
  return CLI::Validator(
      [min, max, range](std::string& text) -> std::string {
        auto n = ParseCount(text, max);
        if (!n) return n.error() + " (" + range + ")";
        if (*n < min) return Quoted(text) + " is less than " + std::to_string(min);
        return {};
      },
      range);
}

}  // namespace writelab
