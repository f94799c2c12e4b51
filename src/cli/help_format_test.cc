// SPDX-License-Identifier: MIT
// --help wrapped to the terminal (issue 45): words never split, no line past
// the width unless one word is longer than the room, a description's own
// lines kept with their indents, an indented item's continuation two more.
#include "cli/help_format.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace writelab {
namespace {

TEST(HelpFormat, WrapsAtSpacesAndKeepsTheTextsOwnLines) {
  EXPECT_EQ(WrapText("one two three four", 9), "one two\nthree\nfour");
  EXPECT_EQ(WrapText("a list:\n  fsync: pwrite, then fsync", 20),
            "a list:\n  fsync: pwrite,\n    then fsync");
  EXPECT_EQ(WrapText("unbreakable-word-longer-than-room x", 10),
            "unbreakable-word-longer-than-room\nx");
  EXPECT_EQ(WrapText("ends with a newline\n", 80), "ends with a newline\n");
  EXPECT_EQ(WrapText("", 80), "");
}

TEST(HelpFormat, TheWidthIsColumnsWhenStdoutIsNoTerminal) {
  ::setenv("COLUMNS", "100", 1);
  EXPECT_EQ(HelpWidth(), 100u);
  ::setenv("COLUMNS", "20", 1);
  EXPECT_EQ(HelpWidth(), 60u) << "never under 60";
  ::setenv("COLUMNS", "wide", 1);
  EXPECT_EQ(HelpWidth(), 80u);
  ::unsetenv("COLUMNS");
  EXPECT_EQ(HelpWidth(), 80u);
}

}  // namespace
}  // namespace writelab
