// Reading result documents named on the command line (report, compare).
#pragma once

#include <expected>
#include <string>

#include "core/result.h"

namespace writelab {

// The document in path; on failure one line naming the file and the reason:
// "a.json: No such file or directory", "a.json: not a writelab result: ..." (FromJson).
std::expected<Document, std::string> ReadDocumentFile(const std::string& path);

}  // namespace writelab
