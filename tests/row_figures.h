// SPDX-License-Identifier: MIT
// FigureMedian(row, key): the median of a row's figure, for unit tests of an
// experiment's row building; a figure the row lacks fails the test and gives -1.
#pragma once

#include <gtest/gtest.h>

#include "core/result.h"

namespace writelab::test_support {

inline double FigureMedian(const Row& row, const char* key) {
  const Figure* f = row.FindFigure(key);
  EXPECT_NE(f, nullptr) << row.name << " has no figure " << key;
  return f ? f->value.median : -1;
}

}  // namespace writelab::test_support
