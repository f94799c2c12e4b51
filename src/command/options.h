// SPDX-License-Identifier: MIT
// Option parsers every command uses: sizes and durations with units, lists
// of a table's choices, and the "where to write" pair of options
// (--dir or --file). command/count_option.h has whole numbers.
#pragma once

#include "command/cli_fwd.h"

#include <cstdint>
#include <expected>
#include <string>
#include <vector>

#include "core/choice.h"
#include "core/suggest.h"
#include "core/units.h"

namespace writelab {

// A usage error, for a BuildSpec that returns std::expected<Spec,
// std::string> (every command's does): return Refuse("--x: why");
inline std::unexpected<std::string> Refuse(std::string why) {
  return std::unexpected(std::move(why));
}

// "--size: '12q' is not a size" on failure.
std::expected<uint64_t, std::string> SizeOption(const char* name, const std::string& text);
std::expected<uint64_t, std::string> DurationOption(const char* name, const std::string& text);

// An option's help that lists a table's choices: intro, then "name: summary"
// per entry (strategies, methods, modes, sync methods, backgrounds).
template <class Table>
std::string ListHelp(const char* intro, const Table& table) {
  std::string text = intro;
  for (const auto& entry : table) text += std::string("\n  ") + entry.name + ": " + entry.summary;
  return text;
}

// The names of a table's choices, in its order.
template <class Table>
std::vector<std::string> ChoiceNames(const Table& table) {
  std::vector<std::string> names;
  for (const auto& entry : table) names.emplace_back(entry.name);
  return names;
}

// "OPTION: unknown WHAT 'x' (a, b or c); did you mean 'b'?"
template <class Table>
std::string UnknownChoice(const char* option, const char* what, const Table& table,
                          const std::string& name) {
  const std::vector<std::string> names = ChoiceNames(table);
  return std::string(option) + ": unknown " + what + " '" + name + "' (" +
         ListInWords(names, "or") + ")" + DidYouMean(name, names);
}

// The ids of names in table, for a list option: UnknownChoice's line for a
// name the table lacks.
template <class Table>
auto ChoicesOption(const char* option, const char* what, const Table& table,
                   const std::vector<std::string>& names)
    -> std::expected<std::vector<decltype(std::begin(table)->id)>, std::string> {
  std::vector<decltype(std::begin(table)->id)> ids;
  for (const std::string& name : names) {
    auto* entry = FindChoice(table, name);
    if (!entry) return std::unexpected(UnknownChoice(option, what, table, name));
    ids.push_back(entry->id);
  }
  return ids;
}

// The "where to write" group: two options of which at most one is given
// (--dir DIR or --file PATH; --device DEV or --file PATH).
struct ExclusivePair {
  const char* first;       // "--dir"
  const char* first_text;  // "DIR"
  std::string* first_value;
  std::string first_help;
  std::string* file_value;  // --file PATH
  std::string file_help;
};
void AddExclusivePair(CLI::App& sub, const char* group_help, const ExclusivePair& pair);

}  // namespace writelab
