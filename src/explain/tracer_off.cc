// SPDX-License-Identifier: MIT
// `writelab explain -- CMD` in a build without the BPF toolchain.
#include "explain/explainer.h"
#include "explain/tracer.h"

namespace writelab {

Result<std::unique_ptr<Tracer>> StartTracer(TraceSink, const std::vector<dev_t>&) {
  return Unexpected(PlainError(*ExplainRefusal()));
}

Result<std::unique_ptr<Tracer>> StartMachineTracer(TraceSink, const std::vector<WatchedFs>&) {
  return Unexpected(PlainError(*ExplainRefusal()));
}

}  // namespace writelab
