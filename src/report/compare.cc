// SPDX-License-Identifier: MIT
#include "report/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "core/significance.h"
#include "core/tails.h"
#include "core/units.h"
#include "report/text.h"

namespace writelab {
namespace {

std::string Key(const ExperimentResult& e) {
  return e.name + (e.testbed.empty() ? "" : " on " + e.testbed) +
         (e.scheduler.empty() ? "" : " under " + e.scheduler) +
         (e.ranks > 0 ? " on " + std::to_string(e.ranks) + (e.ranks == 1 ? " rank" : " ranks")
                      : "");
}

// The experiments compare matches, by key: under MPI the aggregates (each
// rank's own rows stay in the file for reading, not for verdicts); a key
// that repeats (the survey's one-rank steps with -n 1) gets its place, "(2)".
std::vector<std::pair<std::string, const ExperimentResult*>> Keyed(const Document& d) {
  std::vector<std::pair<std::string, const ExperimentResult*>> out;
  std::map<std::string, int> seen;
  for (const ExperimentResult& e : d.experiments) {
    if (e.rank >= 0 && !d.ranks.empty() && e.ranks == 0) continue;
    const std::string key = Key(e);
    const int n = ++seen[key];
    out.push_back({n == 1 ? key : key + " (" + std::to_string(n) + ")", &e});
  }
  return out;
}

const ExperimentResult* Find(const std::vector<std::pair<std::string, const ExperimentResult*>>& in,
                             const std::string& key) {
  for (const auto& [k, e] : in)
    if (k == key) return e;
  return nullptr;
}

// --label, else the host and kernel (and when it ran).
std::string RunLabel(const Document& d) {
  if (!d.label.empty()) return d.label;
  return d.host.hostname + ", Linux " + d.host.kernel + ", " + d.started_at;
}

constexpr int kResamples = 4000;

FigureComparison CompareFigure(const std::string& exp, const std::string& headline, const Row& row,
                               const Figure& fa, const Figure& fb, Comparison& c,
                               uint64_t& draws_left) {
  FigureComparison f;
  f.experiment = exp;
  f.row = row.name;
  f.key = fa.key;
  f.label = fa.label;
  f.unit = fa.unit;
  f.headline = fa.key == headline;
  f.higher_is_better = HigherIsBetterUnit(fa.unit);
  f.a = fa.value.median;
  f.b = fb.value.median;
  if (f.a != 0 && std::isfinite(f.a) && std::isfinite(f.b))
    f.change_pct = (f.b - f.a) / std::fabs(f.a) * 100;
  f.verdict = CompareSummaries(fa.value, fb.value);
  f.n_a = std::max<size_t>(fa.value.samples.size(), 1);
  f.n_b = std::max<size_t>(fb.value.samples.size(), 1);
  auto constant = [](const Summary& s, double v) {
    return std::all_of(s.samples.begin(), s.samples.end(), [&](double x) { return x == v; });
  };
  f.invariant = f.a == f.b && constant(fa.value, f.a) && constant(fb.value, f.a);
  if (fa.value.samples.size() > 1 && fb.value.samples.size() > 1) {
    f.p = MannWhitneyP(fa.value.samples, fb.value.samples);
    const uint64_t draws =
        uint64_t{kResamples} * (fa.value.samples.size() + fb.value.samples.size());
    if (f.a > 0 && draws > draws_left) {
      ++c.intervals_left_out;
    } else if (f.a > 0) {
      draws_left -= draws;
      if (auto r = BootstrapMedianRatio(fa.value.samples, fb.value.samples, kResamples)) {
        f.change_low_pct = (r->low - 1) * 100;
        f.change_high_pct = (r->high - 1) * 100;
      }
    }
  }
  return f;
}

// A latency's p50, p99 and p99.9, calls merged (core/tails.h).
void CompareTails(const std::string& exp, const Row& ra, const Latency& la, const Latency& lb,
                  Comparison& c) {
  for (double percentile : kTailPercentiles) {
    const TailTest t = CompareTail(la, lb, percentile);
    FigureComparison f;
    f.experiment = exp;
    f.row = ra.name;
    f.key = fmt::format("{}_p{:g}", la.key, percentile);
    f.label = fmt::format("{} p{:g}", la.label, percentile);
    f.unit = "ms";
    f.higher_is_better = false;
    f.a = static_cast<double>(t.a_ns) / 1e6;
    f.b = static_cast<double>(t.b_ns) / 1e6;
    f.change_pct = t.change_pct;
    f.change_low_pct = t.low_pct;
    f.change_high_pct = t.high_pct;
    f.p = t.p;
    f.verdict = !t.p            ? Verdict::kTooFewCalls
                : t.significant ? Verdict::kSignificant
                                : Verdict::kWithinNoise;
    f.n_a = t.n_a;
    f.n_b = t.n_b;
    f.tail = percentile;
    f.beyond_a = t.beyond_a;
    f.beyond_b = t.beyond_b;
    f.why_not = t.why_not;
    c.figures.push_back(std::move(f));
  }
}

void CompareExperiment(const std::string& exp, const ExperimentResult& a, const ExperimentResult& b,
                       Comparison& c, uint64_t& draws_left) {
  const std::string headline = HeadlineFigure(a);
  for (const Row& ra : a.rows) {
    const Row* rb = b.FindRow(ra.name);
    if (!rb) {
      c.only.push_back("only in A: " + exp + ": " + ra.name);
      continue;
    }
    if (ra.status != RowStatus::kOk || rb->status != RowStatus::kOk) {
      c.only.push_back(fmt::format("{}: {}: A {}, B {}", exp, ra.name, RowStatusName(ra.status),
                                   RowStatusName(rb->status)));
      continue;
    }
    for (const Figure& fa : ra.figures)
      if (const Figure* fb = rb->FindFigure(fa.key))
        c.figures.push_back(CompareFigure(exp, headline, ra, fa, *fb, c, draws_left));
    for (const Latency& la : ra.latencies)
      if (const Latency* lb = rb->FindLatency(la.key)) CompareTails(exp, ra, la, *lb, c);
  }
  for (const Row& rb : b.rows)
    if (!a.FindRow(rb.name)) c.only.push_back("only in B: " + exp + ": " + rb.name);
}

std::string ChangeInterval(const FigureComparison& f) {
  if (!f.change_low_pct) return "-";
  return fmt::format("[{:+.1f}%, {:+.1f}%]", *f.change_low_pct, *f.change_high_pct);
}

}  // namespace

// Times and latencies are better smaller; rates and everything else larger.
bool HigherIsBetterUnit(const std::string& unit) {
  return unit != "s" && unit != "ms" && unit != "us" && unit != "ns";
}

std::string HeadlineFigure(const ExperimentResult& e) {
  if (!e.compare_figure.empty()) return e.compare_figure;
  return e.table.empty() ? "" : e.table.front();
}

Verdict CompareSummaries(const Summary& a, const Summary& b) {
  const size_t na = a.samples.size(), nb = b.samples.size();
  if (na < 2 || nb < 2) return Verdict::kCannotTell;
  if (SmallestMannWhitneyP(na, nb) >= 0.05) return Verdict::kTooFewTrials;
  return MannWhitneyP(a.samples, b.samples) < 0.05 ? Verdict::kSignificant : Verdict::kWithinNoise;
}

const char* VerdictText(Verdict v) {
  switch (v) {
    case Verdict::kSignificant:
      return "significant";
    case Verdict::kWithinNoise:
      return "within noise";
    case Verdict::kTooFewTrials:
      return "too few trials to tell";
    case Verdict::kCannotTell:
      return "one trial: cannot tell";
    case Verdict::kTooFewCalls:
      return "too few calls to tell";
  }
  return "";
}

const char* VerdictKey(Verdict v) {
  switch (v) {
    case Verdict::kSignificant:
      return "significant";
    case Verdict::kWithinNoise:
      return "within-noise";
    case Verdict::kTooFewTrials:
      return "too-few-trials";
    case Verdict::kCannotTell:
      return "one-trial";
    case Verdict::kTooFewCalls:
      return "too-few-calls";
  }
  return "";
}

std::string PercentChange(double a, double b) {
  if (a == 0 || !std::isfinite(a) || !std::isfinite(b)) return "-";
  return fmt::format("{:+.1f}%", (b - a) / std::fabs(a) * 100);
}

std::expected<Comparison, std::string> Compare(const Document& a, const Document& b,
                                               uint64_t draws) {
  Comparison c;
  c.label_a = RunLabel(a);
  c.label_b = RunLabel(b);
  int matched = 0;
  uint64_t draws_left = draws;
  const auto keyed_a = Keyed(a), keyed_b = Keyed(b);
  for (const auto& [key, ea] : keyed_a) {
    const ExperimentResult* eb = Find(keyed_b, key);
    if (!eb) {
      c.only.push_back("only in A: " + key);
      continue;
    }
    CompareExperiment(key, *ea, *eb, c, draws_left);
    ++matched;
  }
  for (const auto& [key, eb] : keyed_b)
    if (!Find(keyed_a, key)) c.only.push_back("only in B: " + key);
  if (c.intervals_left_out)
    c.only.push_back("95% intervals left out for " + std::to_string(c.intervals_left_out) +
                     " figures: the bootstrap's budget of " + std::to_string(draws) +
                     " draws was spent (p and verdicts are complete)");
  if (matched == 0)
    return std::unexpected(
        "the files share no experiment (name, test bed and scheduler) to compare");
  return c;
}

namespace {

// "trials: A 3, B 3 per figure; the test needs 4 and 4 (or 3 and 5) to
// tell a change at p < 0.05: with these, none can be significant".
std::string TrialsLine(const Comparison& c) {
  std::map<std::pair<size_t, size_t>, size_t> counts;
  for (const FigureComparison& f : c.figures)
    if (f.tail == 0) ++counts[{f.n_a, f.n_b}];
  if (counts.empty()) return "";
  const auto most =
      std::max_element(counts.begin(), counts.end(), [](const auto& x, const auto& y) {
        return x.second < y.second;
      })->first;
  std::string out = fmt::format(
      "trials: A {}, B {}{}; a change can be significant (p < 0.05) "
      "from 4 and 4 trials (or 3 and 5)",
      most.first, most.second, counts.size() > 1 ? " for most figures" : " per figure");
  if (most.first < 2 || most.second < 2)
    out += ": with one trial on a side, no test can tell";
  else if (SmallestMannWhitneyP(most.first, most.second) >= 0.05)
    out += fmt::format(": with these, none can (p is {:.2g} at best)",
                       SmallestMannWhitneyP(most.first, most.second));
  return out + "\n";
}

}  // namespace

std::string RenderComparisonText(const Comparison& c, bool all) {
  std::string out = "A: " + c.label_a + "\nB: " + c.label_b + "\n" + TrialsLine(c);
  out +=
      "Each figure: the medians; change is B against A with its 95% interval (bootstrap of the "
      "ratio of the medians); p and the verdict from a two-sided Mann-Whitney U test on the "
      "trials (significant: p < 0.05). * marks each experiment's headline figure. A latency's p50, "
      "p99 and p99.9 (calls merged) are tested on the calls of all trials: Fisher's exact test "
      "of the calls above the pooled percentile (significant: p < 0.017, 0.05 over the three); "
      "the interval is each side's 95% order-statistic interval, one over the other.\n";
  std::vector<TextTable> tables;  // one per experiment, in order
  std::vector<std::string> names;
  size_t invariant = 0, hidden = 0, untested = 0;
  for (const FigureComparison& f : c.figures) {
    if (f.verdict == Verdict::kTooFewCalls) {
      ++untested;
      continue;
    }
    if (f.invariant) {
      ++invariant;
      continue;
    }
    if (!all && !f.headline && f.verdict != Verdict::kSignificant) {
      ++hidden;
      continue;
    }
    if (names.empty() || f.experiment != names.back()) {
      names.push_back(f.experiment);
      tables.emplace_back(std::vector<std::string>{"row", "figure", "A", "B", "change",
                                                   "95% interval", "p", "verdict"});
    }
    std::string label = f.label.find(f.unit) != std::string::npos || f.unit.empty()
                            ? f.label
                            : f.label + " (" + f.unit + ")";
    if (f.tail > 0)  // what the estimate rests on
      label = fmt::format("{} ({}; calls merged, {:.0f} and {:.0f} above)", f.label, f.unit,
                          f.beyond_a, f.beyond_b);
    tables.back().AddRow({f.row, (f.headline ? "* " : "") + label, FormatValue(f.a, f.unit),
                          FormatValue(f.b, f.unit), PercentChange(f.a, f.b), ChangeInterval(f),
                          f.p ? fmt::format("{:.3g}", *f.p) : "-", VerdictText(f.verdict)});
  }
  for (size_t i = 0; i < tables.size(); ++i) out += "\n" + names[i] + "\n" + tables[i].Render();
  if (hidden || invariant) {
    out += "\n";
    if (hidden)
      out += fmt::format(
          "{} more figures with no significant change not shown (writelab compare --all)\n",
          hidden);
    if (invariant)
      out += fmt::format("{} figures left out: the same value on every trial of both runs\n",
                         invariant);
  }
  if (untested)
    out += fmt::format(
        "{} latency percentile{} not tested: too few calls (a side needs {:.0f} calls above "
        "it: 1000 calls for p99, 10000 for p99.9)\n",
        untested, untested == 1 ? "" : "s", kTailBeyond);
  if (!c.only.empty()) out += "\n";
  for (const std::string& line : c.only) out += line + "\n";
  return Printable(out, true);
}

std::expected<std::string, std::string> CompareDocuments(const Document& a, const Document& b) {
  auto c = Compare(a, b);
  if (!c) return std::unexpected(c.error());
  return RenderComparisonText(*c);
}

std::string RenderComparisonJson(const Comparison& c) {
  using nlohmann::json;
  json doc = {{"a", c.label_a},
              {"b", c.label_b},
              {"test",
               "two-sided Mann-Whitney U; change interval: percentile bootstrap of the "
               "ratio of the medians, 95%; percentiles of latencies (calls merged): Fisher's "
               "exact test at the pooled percentile, significant at p < 0.05/3, interval from "
               "each side's 95% order-statistic interval"},
              {"figures", json::array()},
              {"only", c.only}};
  auto opt = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  for (const FigureComparison& f : c.figures) {
    doc["figures"].push_back(
        {{"experiment", f.experiment},
         {"row", f.row},
         {"key", f.key},
         {"label", f.label},
         {"unit", f.unit},
         {"headline", f.headline},
         {"higher_is_better", f.higher_is_better},
         {"a", f.a},
         {"b", f.b},
         {"change_pct", opt(f.change_pct)},
         {"change_interval_pct",
          f.change_low_pct ? json::array({*f.change_low_pct, *f.change_high_pct}) : json(nullptr)},
         {"p", opt(f.p)},
         {"verdict", VerdictKey(f.verdict)}});
    if (f.tail > 0) {
      json& t = doc["figures"].back();
      t["percentile"] = f.tail;
      t["calls"] = json::array({f.n_a, f.n_b});
      t["calls_above"] = json::array({f.beyond_a, f.beyond_b});
      if (!f.why_not.empty()) t["why_not"] = f.why_not;
    }
  }
  return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

std::vector<const FigureComparison*> Regressions(const Comparison& c, double pct) {
  std::vector<const FigureComparison*> out;
  for (const FigureComparison& f : c.figures) {
    if (!(f.headline || f.tail >= 99) || f.verdict != Verdict::kSignificant || !f.change_pct)
      continue;
    const double worse = f.higher_is_better ? -*f.change_pct : *f.change_pct;
    if (worse > pct) out.push_back(&f);
  }
  return out;
}

}  // namespace writelab
