// SPDX-License-Identifier: MIT
// The survey's conclusion: recommendations read from a result document, each
// backed by the numbers it holds (figures named by checked keys).
#pragma once

#include <string>
#include <vector>

#include "core/result.h"

namespace writelab {

// One line per experiment found in doc, e.g. "streaming: prefer dontcache —
// 2496 MB/s, 0 B left cached, bystander p99 3.0 ms; plain: 494 MB/s, 1.0 GiB
// cached, p99 180 ms". Experiments that failed or are missing get a line
// saying so; nothing is recommended without a measurement behind it.
// Under MPI (doc.ranks not empty) these are RecommendationsAcrossRanks.
std::vector<std::string> Recommendations(const Document& doc);

// The survey under MPI: how streaming and small records scale from rank 0
// alone to every rank at once ("2.1x rank 0 alone, 70% of linear"), and
// rank 0's fsync beside the other ranks' background loads against alone.
std::vector<std::string> RecommendationsAcrossRanks(const Document& doc);

}  // namespace writelab
