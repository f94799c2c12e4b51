// SPDX-License-Identifier: MIT
// `writelab compare`: two result documents side by side. Experiments match by
// name, test bed and scheduler; rows by name; figures by key. Each figure shows
// both medians, the change in percent (B against A) with its 95% interval
// (a bootstrap of the ratio of the medians), and the verdict of a two-sided
// Mann-Whitney U test on the trials (core/significance.h):
//   significant           p < 0.05
//   within noise          p >= 0.05
//   too few trials        the sample sizes cannot reach p < 0.05 at all
//                         (2 and 2 trials: 1/3 at best; 3 and 3: 0.1)
//   one trial             a side has a single trial
// Each latency both rows have (a row's calls merged over its trials) is
// compared at p50, p99 and p99.9 too, by core/tails.h's quantile test:
//   significant           p < 0.05 / 3
//   too few calls         fewer than 10 calls a side expected above it
// docs/report.md explains the choice.
#pragma once

#include <expected>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"

namespace writelab {

enum class Verdict { kSignificant, kWithinNoise, kTooFewTrials, kCannotTell, kTooFewCalls };

// The verdict on two summaries of the same figure (their samples).
Verdict CompareSummaries(const Summary& a, const Summary& b);
const char* VerdictText(Verdict v);
// "significant", "within-noise", "too-few-trials", "one-trial", "too-few-calls".
const char* VerdictKey(Verdict v);

// Percent change from a to b ("+12.3%", "-4.0%"), "-" when a is 0 or not finite.
std::string PercentChange(double a, double b);

// One figure of one row, compared.
struct FigureComparison {
  std::string experiment;  // "stream on ext4:data=ordered under none"
  std::string row, key, label, unit;
  bool headline = false;  // the experiment's compare figure (or first table figure)
  double a = 0, b = 0;    // medians
  std::optional<double> change_pct;
  std::optional<double> change_low_pct, change_high_pct;  // 95% bootstrap interval
  std::optional<double> p;                                // Mann-Whitney, two-sided
  Verdict verdict = Verdict::kCannotTell;
  // Whether a larger value is better for this figure (MB/s) or worse (ms).
  bool higher_is_better = true;
  size_t n_a = 0, n_b = 0;  // trials
  // The same value on every trial of both: nothing to compare (write calls 32 and 32).
  bool invariant = false;
  // A percentile of a latency, calls merged over the trials (tail > 0: 99
  // for p99): n_a and n_b are calls, and beyond_* the calls each side has
  // above the percentile, what its estimate rests on.
  double tail = 0;
  double beyond_a = 0, beyond_b = 0;
  std::string why_not;  // kTooFewCalls: "too few calls for p99.9 (needs 10000 a side; ...)"
};

// The bootstrap's draws one comparison may make in all (resamples x the
// samples of both sides, over every figure; about a second here), so that
// documents with many matching figures cannot make compare run for hours.
// Figures past it get no interval, and the comparison says how many.
inline constexpr uint64_t kBootstrapDraws = 100'000'000;

struct Comparison {
  std::string label_a, label_b;
  std::vector<FigureComparison> figures;
  std::vector<std::string> only;  // "only in A: fsync", "only in B: stream: direct"
  size_t intervals_left_out = 0;  // figures past kBootstrapDraws
};

// An error (one line) when the documents share no experiment. draws: the
// bootstrap's budget (tests pass a small one).
std::expected<Comparison, std::string> Compare(const Document& a, const Document& b,
                                               uint64_t draws = kBootstrapDraws);

// The side-by-side text: how many trials each side has and what the test
// needs, then per experiment its headline figures and every significant
// change (all: every figure that is not invariant); what was left out is
// counted at the end.
std::string RenderComparisonText(const Comparison& c, bool all = false);
std::expected<std::string, std::string> CompareDocuments(const Document& a, const Document& b);
// The comparison as JSON (docs/report.md).
std::string RenderComparisonJson(const Comparison& c);

// Whether a larger value of a figure in this unit is better (MB/s) or
// worse (s, ms, us, ns).
bool HigherIsBetterUnit(const std::string& unit);
// The figure an experiment is compared by: its compare figure, else its
// table's first.
std::string HeadlineFigure(const ExperimentResult& e);

// Headline figures, and p99 and p99.9 of every latency, that got
// significantly worse by more than pct percent.
std::vector<const FigureComparison*> Regressions(const Comparison& c, double pct);

}  // namespace writelab
