// SPDX-License-Identifier: MIT
#include "cli/usage.h"

#include <CLI/CLI.hpp>

#include "core/suggest.h"
#include "core/units.h"

namespace writelab {
namespace {

std::vector<std::string> CommandNames(CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    names.push_back(sub->get_name());
  return names;
}

// "--size", "-h"... every name an option of sub answers to.
std::vector<std::string> OptionNames(const CLI::App& sub) {
  std::vector<std::string> names;
  for (const CLI::Option* o : sub.get_options()) {
    for (const std::string& l : o->get_lnames()) names.push_back("--" + l);
    for (const std::string& s : o->get_snames()) names.push_back("-" + s);
  }
  return names;
}

// The option a word names ("--size=1G" names --size), or null.
const CLI::Option* OptionOf(CLI::App& sub, const std::string& word) {
  return sub.get_option_no_throw(word.substr(0, word.find('=')));
}

bool LooksLikeOption(const std::string& word) { return word.size() > 1 && word[0] == '-'; }

}  // namespace

CLI::App* FindCommand(CLI::App& app, const std::string& word) {
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    if (sub->get_name() == word) return sub;
  return nullptr;
}

std::string UnknownCommand(CLI::App& app, const std::string& word) {
  return Quoted(word) + " is not a writelab command" + DidYouMean(word, CommandNames(app)) +
         " (see writelab --help)";
}

void SeparateProgram(CLI::App& app, std::vector<std::string>& args) {
  CLI::App* sub = args.size() > 1 ? FindCommand(app, args[1]) : nullptr;
  if (!sub || !sub->get_option_no_throw("command")) return;
  for (size_t i = 2; i < args.size(); ++i) {
    const std::string& w = args[i];
    if (w == "--") return;
    if (!LooksLikeOption(w)) {
      args.insert(args.begin() + static_cast<long>(i), "--");
      return;
    }
    const CLI::Option* o = OptionOf(*sub, w);
    if (o && w.find('=') == std::string::npos && o->get_expected_min() > 0) ++i;  // its value
  }
}

std::string ParseRefusal(CLI::App& app, const std::vector<std::string>& args,
                         const CLI::ParseError& e) {
  CLI::App* sub = args.size() > 1 ? FindCommand(app, args[1]) : nullptr;
  if (!sub) return std::string(e.what()) + " (see writelab --help)";
  const std::string help = " (see writelab help " + sub->get_name() + ")";
  if (dynamic_cast<const CLI::ExtrasError*>(&e))
    for (size_t i = 2; i < args.size() && args[i] != "--"; ++i) {
      const std::string& w = args[i];
      if (!LooksLikeOption(w)) continue;
      if (const CLI::Option* o = OptionOf(*sub, w)) {
        if (w.find('=') == std::string::npos && o->get_expected_min() > 0) ++i;  // its value
        continue;
      }
      if (OptionOf(app, w)) continue;
      const std::string name = w.substr(0, w.find('='));
      return name + ": not an option of " + sub->get_name() + DidYouMean(name, OptionNames(*sub)) +
             help;
    }
  return std::string(e.what()) + help;
}

}  // namespace writelab
