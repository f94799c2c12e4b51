// SPDX-License-Identifier: MIT
// `writelab top`'s two results from what the session tallied.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"
#include "program/top/def.h"
#include "program/top/tally.h"

namespace writelab {

void FillTopDocument(const TopSpec& spec, const TopTally& tally, uint64_t start_ns, uint64_t end_ns,
                     const std::vector<std::string>& notes, Document& doc);

}  // namespace writelab
