// SPDX-License-Identifier: MIT
// `--help` wrapped to the terminal: the descriptions of commands, options and
// subcommands broken at spaces so that no line passes the width (a word
// longer than the room stays whole), continuation lines indented under their
// column; a description's own lines (the lists of --sync, --background...)
// are kept, each item's continuation indented two more. The width is the
// terminal's when stdout is one, else $COLUMNS, else 80 (help2man's man
// page, a pipe); never under 60.
#pragma once

#include <CLI/CLI.hpp>

#include <cstddef>
#include <string>

#include "core/wrap.h"  // WrapText

namespace writelab {

std::size_t HelpWidth();

class WrappingFormatter : public CLI::Formatter {
 public:
  explicit WrappingFormatter(std::size_t width) : width_(width) {}
  std::string make_option_desc(const CLI::Option* opt) const override;
  std::string make_description(const CLI::App* app) const override;
  std::string make_subcommand(const CLI::App* sub) const override;
  std::string make_footer(const CLI::App* app) const override;

 private:
  // Room for a description beside the name column.
  std::size_t Room() const;
  std::size_t width_;
};

}  // namespace writelab
