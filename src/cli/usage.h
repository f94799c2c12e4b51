// SPDX-License-Identifier: MIT
// Usage errors that help: a mistyped command or option gets "did you mean",
// an error points at the command's own help, and the words after a
// program's first word are the program's (writelab run cp -f a b runs
// `cp -f a b`, as if written after --).
#pragma once

#include "command/cli_fwd.h"

#include <string>
#include <vector>

namespace writelab {

// The command named word, or null.
CLI::App* FindCommand(CLI::App& app, const std::string& word);

// "'survy' is not a writelab command; did you mean 'survey'? (see writelab --help)".
std::string UnknownCommand(CLI::App& app, const std::string& word);

// For a command that runs a program (a positional "command": run,
// explain): puts "--" before the program's first word, so that what follows
// is the program's even where it looks like writelab's (--json, -f).
// args: argv, the command at [1].
void SeparateProgram(CLI::App& app, std::vector<std::string>& args);

// The one line for a parse error of args: an unknown option of the command
// named with the closest one, else CLI11's words; each ending "(see
// writelab help CMD)".
std::string ParseRefusal(CLI::App& app, const std::vector<std::string>& args,
                         const CLI::ParseError& e);

}  // namespace writelab
