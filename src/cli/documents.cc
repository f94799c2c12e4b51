#include "cli/documents.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "report/json.h"

namespace writelab {

std::expected<Document, std::string> ReadDocumentFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::unexpected(path + ": " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return std::unexpected(path + ": read failed");
  auto doc = FromJson(text.str());
  if (!doc) return std::unexpected(path + ": " + doc.error());  // FromJson names the problem
  return doc;
}

}  // namespace writelab
