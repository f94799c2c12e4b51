// SPDX-License-Identifier: MIT
// `writelab compare`: two result documents side by side. Experiments match by
// name, test bed and scheduler; rows by name; figures by key. Each figure shows
// both medians, the change in percent (B against A), and whether the
// difference is larger than the trials' 95% confidence intervals of the mean:
// "significant" when the intervals do not overlap, "within noise" when they
// do, and "one trial: cannot tell" when either side has fewer than two trials.
#pragma once

#include <expected>
#include <string>

#include "core/result.h"

namespace writelab {

enum class Verdict { kSignificant, kWithinNoise, kCannotTell };

// The verdict on two summaries of the same figure.
Verdict CompareSummaries(const Summary& a, const Summary& b);
const char* VerdictText(Verdict v);

// Percent change from a to b ("+12.3%", "-4.0%"), "-" when a is 0 or not finite.
std::string PercentChange(double a, double b);

// The side-by-side text; an error (one line) when the documents share no
// experiment.
std::expected<std::string, std::string> CompareDocuments(const Document& a, const Document& b);

}  // namespace writelab
