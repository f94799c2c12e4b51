// SPDX-License-Identifier: MIT
#include "cli/documents.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/document_json.h"
#include "telemetry/memory_budget.h"

namespace writelab {
namespace {

// Reads fd to its end, failing when it holds more than limit bytes.
std::expected<std::string, std::string> ReadAtMost(int fd, uint64_t limit) {
  std::string text;
  char buf[1 << 16];
  while (true) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::unexpected(std::strerror(errno));
    if (n == 0) return text;
    if (text.size() + static_cast<size_t>(n) > limit)
      return std::unexpected("larger than 1 GiB, the most writelab reads");
    text.append(buf, static_cast<size_t>(n));
  }
}

std::expected<std::string, std::string> ReadInput(const std::string& path) {
  if (path == "-") {
    struct stat st;
    if (fstat(STDIN_FILENO, &st) == 0 && S_ISREG(st.st_mode) &&
        static_cast<uint64_t>(st.st_size) > kMaxDocumentBytes)
      return std::unexpected("larger than 1 GiB, the most writelab reads");
    return ReadAtMost(STDIN_FILENO, kMaxDocumentBytes);
  }
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return std::unexpected(std::strerror(errno));
  struct stat st;
  std::expected<std::string, std::string> text;
  if (fstat(fd, &st) != 0)
    text = std::unexpected(std::strerror(errno));
  else if (!S_ISREG(st.st_mode))
    text = std::unexpected("not a regular file (give a result file, or - for standard input)");
  else if (static_cast<uint64_t>(st.st_size) > kMaxDocumentBytes)
    text = std::unexpected("larger than 1 GiB, the most writelab reads");
  else
    text = ReadAtMost(fd, kMaxDocumentBytes);  // the file may grow while it is read
  close(fd);
  return text;
}

}  // namespace

std::expected<Document, std::string> ReadDocumentFile(const std::string& path) {
  auto file = ReadDocumentFileText(path);
  if (!file) return std::unexpected(file.error());
  return std::move(file->doc);
}

std::expected<DocumentFile, std::string> ReadDocumentFileText(const std::string& path) {
  auto text = ReadInput(path);
  if (!text) return std::unexpected(path + ": " + text.error());
  auto doc = FromJson(*text, AvailableMemory());
  if (!doc) return std::unexpected(path + ": " + doc.error());  // FromJson names the problem
  return DocumentFile{std::move(*text), std::move(*doc)};
}

}  // namespace writelab
