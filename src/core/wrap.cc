// SPDX-License-Identifier: MIT
#include "core/wrap.h"

#include <algorithm>
#include <sstream>

namespace writelab {
namespace {

// One line of a description, broken at spaces; the continuation lines of an
// indented line (a list's item) get its indent and two more.
void WrapLine(const std::string& line, std::size_t width, std::string& out) {
  const std::size_t indent = line.find_first_not_of(' ');
  if (indent == std::string::npos) return;
  const std::string lead(indent, ' '), more(indent == 0 ? 0 : indent + 2, ' ');
  std::istringstream words(line.substr(indent));
  std::string word, current = lead;
  bool empty = true;
  while (words >> word) {
    if (!empty && current.size() + 1 + word.size() > width) {
      out += current + "\n";
      current = more, empty = true;
    }
    current += (empty ? "" : " ") + word;
    empty = false;
  }
  out += current;
}

}  // namespace

std::string WrapText(const std::string& text, std::size_t width) {
  std::string out;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    WrapLine(text.substr(at, end - at), width, out);
    if (end == text.size()) break;
    out += "\n";
    at = end + 1;
  }
  return out;
}

}  // namespace writelab
