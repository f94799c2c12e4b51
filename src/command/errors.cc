// SPDX-License-Identifier: MIT
#include "command/errors.h"

#include <cstdio>
#include <string>

#include "core/units.h"
#include "mpi/session.h"

namespace writelab {
namespace {

std::string OneLine(std::string s) {
  for (char& c : s)
    if (c == '\n') c = ' ';
  s = Printable(s);
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

}  // namespace

void PrintError(const std::string& message) {
  std::fprintf(stderr, "writelab: %s\n", OneLine(message).c_str());
}

int UsageError(const std::string& message) {
  PrintError(message);
  return kExitUsage;
}

int AgreeOrRefuse(const RunContext& ctx, const std::optional<std::string>& usage) {
  if (ctx.team) return AgreeToStart(*ctx.team, usage, {}).value_or(-1);
  return usage ? UsageError(*usage) : -1;
}

}  // namespace writelab
