// SPDX-License-Identifier: MIT
#include "core/outcome.h"

#include <utility>

namespace writelab {

void Outcome::Fail(int err, const std::string& what, Feature feature) {
  Fail(ErrnoError(err, what), feature);
}

void Outcome::Fail(const Error& e, Feature feature) {
  if (!ok()) return;
  status = IsUnsupported(e.code, feature) ? RowStatus::kUnsupported : RowStatus::kFailed;
  error = e.code;
  message = e.Message();
}

Row MakeRow(std::string name, const Outcome& outcome) {
  Row row;
  row.name = std::move(name);
  row.status = outcome.status;
  row.error_code = outcome.error;
  row.message = outcome.message;
  return row;
}

Outcome Unmeasured(const std::string& what) {
  Outcome o;
  o.Fail(PlainError("not measured: the run stopped before this " + what));
  return o;
}

}  // namespace writelab
