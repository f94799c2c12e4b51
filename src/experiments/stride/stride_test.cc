// SPDX-License-Identifier: MIT
// ParseSteps and ValidateStrideSpec on what users type: every number is
// checked, nothing wraps, and the number of steps is bounded.
#include "experiments/stride/stride.h"

#include <gtest/gtest.h>

namespace writelab {
namespace {

TEST(ParseSteps, NumbersAndRanges) {
  EXPECT_EQ(ParseSteps("1-4,32,64").value(), (std::vector<uint64_t>{1, 2, 3, 4, 32, 64}));
  EXPECT_EQ(ParseSteps("7").value(), (std::vector<uint64_t>{7}));
  EXPECT_EQ(ParseSteps("1048576").value(), (std::vector<uint64_t>{kMaxStep}));
  EXPECT_EQ(ParseSteps("1-4096").value().size(), kMaxSteps);
}

TEST(ParseSteps, RefusesSignsAndJunk) {
  EXPECT_EQ(ParseSteps("-1").error(), "--steps: '-1' is not a step or a range A-B");
  EXPECT_EQ(ParseSteps("1-2-3").error(), "--steps: '1-2-3' is not a step or a range A-B");
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
  EXPECT_EQ(ParseSteps("99999999999999999999").error(),
            "--steps: '99999999999999999999' is more than the largest step, 1048576");
  EXPECT_EQ(ParseSteps("18446744073709551615").error(),
            "--steps: '18446744073709551615' is more than the largest step, 1048576");
  EXPECT_EQ(ParseSteps("1048577").error(),
            "--steps: '1048577' is more than the largest step, 1048576");
}

TEST(ParseSteps, BoundsTheNumberOfSteps) {
  EXPECT_EQ(ParseSteps("1-1048576").error(), "--steps: more than 4096 steps");
  EXPECT_EQ(ParseSteps("1-4096,5000").error(), "--steps: more than 4096 steps");
  EXPECT_EQ(ParseSteps("0").error(), "--steps: '0' must be 1 or more, ranges low-high");
  EXPECT_EQ(ParseSteps("9-3").error(), "--steps: '9-3' must be 1 or more, ranges low-high");
}

TEST(ValidateStrideSpec, BoundsBlockUnitAndSpan) {
  StrideSpec spec;
  spec.unit = 2u << 30;
  EXPECT_EQ(ValidateStrideSpec(spec).error(), "--unit: at most 1 GiB");
  spec = {};
  spec.block = 128u << 20;
  EXPECT_EQ(ValidateStrideSpec(spec).error(), "--block: at most 64 MiB");
  spec = {};
  spec.span = UINT64_MAX;
  EXPECT_EQ(ValidateStrideSpec(spec).error(), "--span: at most 1 EiB");
  spec = {};
  EXPECT_TRUE(ValidateStrideSpec(spec).has_value());
}

}  // namespace
}  // namespace writelab
