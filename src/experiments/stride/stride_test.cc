// SPDX-License-Identifier: MIT
// ParseSteps and ValidateStrideSpec on what users type: every number is
// checked, nothing wraps, and the number of steps is bounded.
#include "experiments/stride/stride.h"
#include "expect_ok.h"

#include <gtest/gtest.h>

namespace writelab {
namespace {

using ::writelab::testing::ErrorOf;

TEST(ParseSteps, NumbersAndRanges) {
  EXPECT_EQ(ParseSteps("1-4,32,64").value(), (std::vector<uint64_t>{1, 2, 3, 4, 32, 64}));
  EXPECT_EQ(ParseSteps("7").value(), (std::vector<uint64_t>{7}));
  EXPECT_EQ(ParseSteps("1048576").value(), (std::vector<uint64_t>{kMaxStep}));
  EXPECT_EQ(ParseSteps("1-4096").value().size(), kMaxSteps);
}

TEST(ParseSteps, RefusesSignsAndJunk) {
  EXPECT_EQ(ErrorOf(ParseSteps("-1")), "--steps: '-1' is not a step or a range A-B");
  EXPECT_EQ(ErrorOf(ParseSteps("1-2-3")), "--steps: '1-2-3' is not a step or a range A-B");
  for (const char* bad :
       {"", ",", "1,", ",1", "1-", "+1", " 1", "1 ", "0x10", "1.5", "a", "1--2", "1,,2", "1-+2"}) {
    auto r = ParseSteps(bad);
    EXPECT_FALSE(r.has_value()) << bad;
    if (!r) {
      EXPECT_EQ(r.error().rfind("--steps: ", 0), 0u) << r.error();
    }
  }
}

TEST(ParseSteps, RefusesHugeNumbersInsteadOfWrapping) {
  EXPECT_EQ(ErrorOf(ParseSteps("99999999999999999999")),
            "--steps: '99999999999999999999' is more than the largest step, 1048576");
  EXPECT_EQ(ErrorOf(ParseSteps("18446744073709551615")),
            "--steps: '18446744073709551615' is more than the largest step, 1048576");
  EXPECT_EQ(ErrorOf(ParseSteps("1048577")),
            "--steps: '1048577' is more than the largest step, 1048576");
}

TEST(ParseSteps, BoundsTheNumberOfSteps) {
  EXPECT_EQ(ErrorOf(ParseSteps("1-1048576")), "--steps: more than 4096 steps");
  EXPECT_EQ(ErrorOf(ParseSteps("1-4096,5000")), "--steps: more than 4096 steps");
  EXPECT_EQ(ErrorOf(ParseSteps("0")), "--steps: '0' must be 1 or more, ranges low-high");
  EXPECT_EQ(ErrorOf(ParseSteps("9-3")), "--steps: '9-3' must be 1 or more, ranges low-high");
}

TEST(ValidateStrideSpec, BoundsBlockUnitAndSpan) {
  StrideSpec spec;
  spec.unit = 2u << 30;
  EXPECT_EQ(ErrorOf(ValidateStrideSpec(spec)), "--unit: at most 1 GiB");
  spec = {};
  spec.block = 128u << 20;
  EXPECT_EQ(ErrorOf(ValidateStrideSpec(spec)), "--block: at most 64 MiB");
  spec = {};
  spec.span = UINT64_MAX;
  EXPECT_EQ(ErrorOf(ValidateStrideSpec(spec)), "--span: at most 1 EiB");
  spec = {};
  EXPECT_TRUE(ValidateStrideSpec(spec).has_value());
}

}  // namespace
}  // namespace writelab
