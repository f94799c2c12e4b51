// SPDX-License-Identifier: MIT
#include "cli/help_format.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "core/wrap.h"

namespace writelab {
namespace {

constexpr std::size_t kNarrowest = 60, kPlain = 80;

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
