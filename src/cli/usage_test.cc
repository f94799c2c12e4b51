// SPDX-License-Identifier: MIT
// The words after a program's first word are the program's: `--` goes
// before them, wherever writelab's own options and their values end.
#include "cli/usage.h"

#include <CLI/CLI.hpp>

#include <gtest/gtest.h>

namespace writelab {
namespace {

class Usage : public ::testing::Test {
 protected:
  void SetUp() override {
    CLI::App* run = app.add_subcommand("run", "");
    run->add_option("--strategy", strategy);
    run->add_flag("--quiet", quiet);
    run->add_option("command", command)->expected(-1);
    app.add_subcommand("stream", "")->add_option("--size", strategy);
  }
  std::vector<std::string> Separated(std::vector<std::string> args) {
    args.insert(args.begin(), "writelab");
    SeparateProgram(app, args);
    return {args.begin() + 1, args.end()};
  }
  CLI::App app;
  std::string strategy;
  bool quiet = false;
  std::vector<std::string> command;
};

TEST_F(Usage, TheProgramsWordsAreItsOwn) {
  using V = std::vector<std::string>;
  EXPECT_EQ(Separated({"run", "--strategy", "w", "cp", "-f", "a", "b"}),
            (V{"run", "--strategy", "w", "--", "cp", "-f", "a", "b"}));
  EXPECT_EQ(Separated({"run", "--strategy=w", "--quiet", "dd", "--json", "x"}),
            (V{"run", "--strategy=w", "--quiet", "--", "dd", "--json", "x"}));
  EXPECT_EQ(Separated({"run", "--", "cp", "-f"}), (V{"run", "--", "cp", "-f"})) << "already";
  EXPECT_EQ(Separated({"run", "--quiet"}), (V{"run", "--quiet"})) << "no program";
  EXPECT_EQ(Separated({"stream", "--size", "1G"}), (V{"stream", "--size", "1G"}))
      << "a command that runs no program";
}

}  // namespace
}  // namespace writelab
