// SPDX-License-Identifier: MIT
#include "command/options.h"

#include <CLI/CLI.hpp>

#include "core/units.h"

namespace writelab {

std::expected<uint64_t, std::string> SizeOption(const char* name, const std::string& text) {
  auto v = ParseSize(text);
  if (!v) return std::unexpected(std::string(name) + ": " + v.error());
  return *v;
}

std::expected<uint64_t, std::string> DurationOption(const char* name, const std::string& text) {
  auto v = ParseDurationNs(text);
  if (!v) return std::unexpected(std::string(name) + ": " + v.error());
  return *v;
}

void AddExclusivePair(CLI::App& sub, const char* group_help, const ExclusivePair& pair) {
  auto* group = sub.add_option_group("target", group_help);
  group->add_option(pair.first, *pair.first_value, pair.first_help)->option_text(pair.first_text);
  group->add_option("--file", *pair.file_value, pair.file_help)->option_text("PATH");
  group->require_option(0, 1);
}

}  // namespace writelab
