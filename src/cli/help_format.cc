// SPDX-License-Identifier: MIT
#include "cli/help_format.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace writelab {
namespace {

constexpr std::size_t kNarrowest = 60, kPlain = 80;

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

std::size_t HelpWidth() {
  struct winsize ws {};
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
    return std::max<std::size_t>(ws.ws_col, kNarrowest);
  if (const char* columns = std::getenv("COLUMNS")) {
    char* end = nullptr;
    const unsigned long n = std::strtoul(columns, &end, 10);
    if (end != columns && *end == '\0' && n > 0 && n < 1000)
      return std::max<std::size_t>(n, kNarrowest);
  }
  return kPlain;
}

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

// Two less than beside the column: an option group's options are indented two more.
std::size_t WrappingFormatter::Room() const {
  return std::max<std::size_t>(width_ > column_width_ + 2 ? width_ - column_width_ - 2 : 0, 30);
}

std::string WrappingFormatter::make_option_desc(const CLI::Option* opt) const {
  return WrapText(CLI::Formatter::make_option_desc(opt), Room());
}

std::string WrappingFormatter::make_description(const CLI::App* app) const {
  return WrapText(CLI::Formatter::make_description(app), width_);
}

std::string WrappingFormatter::make_subcommand(const CLI::App* sub) const {
  std::stringstream out;
  CLI::detail::format_help(out, sub->get_display_name(true),
                           WrapText(sub->get_description(), Room()), column_width_);
  return out.str();
}

std::string WrappingFormatter::make_footer(const CLI::App* app) const {
  return WrapText(CLI::Formatter::make_footer(app), width_);
}

}  // namespace writelab
