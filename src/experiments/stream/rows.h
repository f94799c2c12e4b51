// SPDX-License-Identifier: MIT
// How `writelab stream` turns trials into rows: each strategy's trials are
// accumulated (figures per trial, histograms merged, series kept) and become
// one row with medians and min-max. Internal to the stream experiment; its own
// file so that the row building is tested without writing a file.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/histogram.h"
#include "core/outcome.h"
#include "core/result.h"
#include "experiments/stream/spec.h"
#include "experiments/stream/trial.h"

namespace writelab {

// Everything measured for one strategy, across its trials.
struct StreamAccumulator {
  Outcome outcome;  // the first trial that did not succeed
  std::map<std::string, std::vector<double>> figures;
  std::map<std::string, std::vector<double>> explained;  // keys of kExplainFigures
  Histogram write_latency;
  Histogram probe_latency;
  std::vector<Series> series;
  std::vector<std::string> notes;
};

// Adds trial `round` (from 0) of one strategy. A trial that did not succeed
// sets the outcome and adds nothing.
void AddStreamTrial(const StreamSpec& spec, int round, const TrialResult& t,
                    StreamAccumulator& acc);

// A strategy's row, named (StreamRowName); moves the accumulator's notes
// and series into it.
Row StreamRow(const std::string& name, StreamAccumulator& acc);

}  // namespace writelab
