// SPDX-License-Identifier: MIT
// A named choice of an experiment (a strategy, method, mode, background):
// the tables that feed --help, option parsing and the default order.
#pragma once

#include <iterator>
#include <string_view>

namespace writelab {

template <class Id>
struct Choice {
  Id id;
  const char* name;     // "window-drop", as typed on the command line
  const char* summary;  // one line for --help
};

// The entry of table named name, or null.
template <class Table>
auto FindChoice(const Table& table, std::string_view name) -> decltype(&*std::begin(table)) {
  for (const auto& entry : table)
    if (name == entry.name) return &entry;
  return nullptr;
}

// The name of id in table ("" when the table lacks it).
template <class Table, class Id>
const char* NameOf(const Table& table, Id id) {
  for (const auto& entry : table)
    if (entry.id == id) return entry.name;
  return "";
}

}  // namespace writelab
