// SPDX-License-Identifier: MIT
// Figure keys are checked: a value under a key the table lacks is a bug that
// fails loudly (KeyOf catches it at compile time where keys are written).
#include "core/result.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace writelab {
namespace {

constexpr FigureSpec kTable[] = {{"mb_s", "MB/s", "MB/s", "everything"},
                                 {"sync_s", "sync", "s", "the final fsync"}};

TEST(FigureKeys, KnownKeysFollowTheTableOrder) {
  std::vector<Figure> figures;
  AddFigures(figures, kTable, std::map<std::string, double>{{"sync_s", 2}, {"mb_s", 1}});
  ASSERT_EQ(figures.size(), 2u);
  EXPECT_EQ(figures[0].key, "mb_s");
  EXPECT_EQ(figures[1].key, "sync_s");
}

TEST(FigureKeys, AnUnknownKeyThrows) {
  std::vector<Figure> figures;
  EXPECT_THROW(AddFigures(figures, kTable, std::map<std::string, double>{{"mb_ss", 1}}),
               std::logic_error);
  EXPECT_THROW(
      AddFigures(figures, kTable, std::map<std::string, std::vector<double>>{{"sync", {1}}}),
      std::logic_error);
}

TEST(FigureKeys, KeyOfAndKeysOfNameTheTableEntries) {
  constexpr FigureKey k = KeyOf(kTable, "sync_s");
  EXPECT_STREQ(k.name, "sync_s");
  constexpr auto columns = KeysOf(kTable, {"mb_s", "sync_s"});
  EXPECT_EQ(KeyNames(columns), (std::vector<std::string>{"mb_s", "sync_s"}));
}

}  // namespace
}  // namespace writelab
