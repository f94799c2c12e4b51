// SPDX-License-Identifier: MIT
// A fixed result document for reporter tests (golden files, round trips).
#pragma once

#include "core/result.h"

namespace writelab {

Document FixedDocument();

}  // namespace writelab
