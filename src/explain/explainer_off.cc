// SPDX-License-Identifier: MIT
// --explain in a build without the BPF toolchain (WRITELAB_EXPLAIN=OFF).
#include "explain/explainer.h"

namespace writelab {

std::optional<std::string> ExplainRefusal() {
  return "--explain is not built into this writelab (configured with WRITELAB_EXPLAIN=OFF)";
}

Result<std::unique_ptr<Explainer>> StartExplainer(const ExplainScope&) {
  return Unexpected(PlainError(*ExplainRefusal()));
}

}  // namespace writelab
