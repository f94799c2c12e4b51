// SPDX-License-Identifier: MIT
// How a measurement ended: the one outcome every experiment's trial, step or
// run carries, and the one way to turn it into a result row.
#pragma once

#include <string>

#include "core/result.h"
#include "port/classify_errno.h"
#include "writelab/error.h"

namespace writelab {

struct Outcome {
  RowStatus status = RowStatus::kOk;
  int error = 0;        // errno behind kUnsupported / kFailed (0 for none)
  std::string message;  // "pwritev2 RWF_DONTCACHE: Operation not supported"
  bool interrupted = false;

  bool ok() const { return status == RowStatus::kOk; }

  // The one way to end an outcome: err from the call `what`, unsupported when
  // ClassifyErrno says it is feature's refusal, otherwise failed. The message
  // is "what: strerror(err)". The first failure is kept; later ones are not.
  void Fail(int err, const std::string& what, Feature feature = Feature::kNone);
  // The same with an Error whose message is complete (a setup step; a
  // PlainError for a failure without errno, such as a verify).
  void Fail(const Error& e, Feature feature = Feature::kNone);
};

// The row for a measurement: its name, status, errno and message. Figures,
// latencies and series are the experiment's to add, and only to an ok row.
Row MakeRow(std::string name, const Outcome& outcome);

// A failed outcome for a measurement the run never reached: "not measured:
// the run stopped before this WHAT".
Outcome Unmeasured(const std::string& what = "row");

}  // namespace writelab
