// SPDX-License-Identifier: MIT
// ParseSteps, alone in its file so that its fuzz target (tests/fuzz) links
// nothing of the experiment.
#include <string>
#include <string_view>

#include "core/units.h"
#include "experiments/stride/spec.h"

namespace writelab {
namespace {

// One number of --steps; the error says why its part is refused.
std::expected<uint64_t, std::string> StepNumber(std::string_view text) {
  auto n = ParseCount(text, kMaxStep);
  if (n) return n;
  if (!text.empty() && text.find_first_not_of("0123456789") == std::string_view::npos)
    return std::unexpected("is more than the largest step, " + std::to_string(kMaxStep));
  return std::unexpected("is not a step or a range A-B");
}

}  // namespace

std::expected<std::vector<uint64_t>, std::string> ParseSteps(const std::string& text) {
  std::vector<uint64_t> steps;
  std::string_view rest = text;
  while (true) {
    size_t comma = rest.find(',');
    std::string_view part = rest.substr(0, comma);
    auto bad = [&](const std::string& why) {
      return std::unexpected("--steps: " + Quoted(part) + " " + why);
    };
    size_t dash = part.find('-');
    auto lo = StepNumber(part.substr(0, dash));
    if (!lo) return bad(lo.error());
    auto hi = dash == std::string_view::npos ? lo : StepNumber(part.substr(dash + 1));
    if (!hi) return bad(hi.error());
    if (*lo == 0 || *hi < *lo) return bad("must be 1 or more, ranges low-high");
    if (*hi - *lo + 1 > kMaxSteps - steps.size())
      return std::unexpected("--steps: more than " + std::to_string(kMaxSteps) + " steps");
    for (uint64_t s = *lo; s <= *hi; ++s) steps.push_back(s);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return steps;
}

}  // namespace writelab
