// SPDX-License-Identifier: MIT
// Reading result documents named on the command line (report, compare).
#pragma once

#include <cstdint>
#include <expected>
#include <string>

#include "core/result.h"

namespace writelab {

// The largest result file report and compare read (docs/results.md).
inline constexpr uint64_t kMaxDocumentBytes = uint64_t{1} << 30;

// The document in path ("-": standard input); on failure one line naming the
// file and the reason: "a.json: No such file or directory", "a.json: not a
// regular file", "a.json: larger than 1 GiB", "a.json: rows[0].status:
// unknown status 'x' (ok, unsupported or failed)" (FromJson names the path).
// The file is opened without blocking (a FIFO does not hang it) and checked
// with fstat on the opened descriptor: a regular file of at most
// kMaxDocumentBytes. Standard input may be a pipe; it is read up to the limit.
std::expected<Document, std::string> ReadDocumentFile(const std::string& path);

// The same, with the file's text as it was read (history import keeps it
// byte for byte).
struct DocumentFile {
  std::string text;
  Document doc;
};
std::expected<DocumentFile, std::string> ReadDocumentFileText(const std::string& path);

}  // namespace writelab
