// SPDX-License-Identifier: MIT
// ValidatePreallocSpec: the file must hold every write, and the product that
// says so must not overflow into a small number that passes.
#include "experiments/prealloc/prealloc.h"
#include "expect_ok.h"

#include <gtest/gtest.h>

namespace writelab {
namespace {

using ::writelab::testing::ErrorOf;

PreallocSpec Spec() {
  PreallocSpec spec;
  spec.dir = ::testing::TempDir();
  return spec;
}

TEST(ValidatePreallocSpec, DefaultsPass) {
  PreallocSpec spec = Spec();
  EXPECT_TRUE(ValidatePreallocSpec(spec).has_value());
}

TEST(ValidatePreallocSpec, OverflowingSpanIsRefused) {
  // 2 x 2251799813685249 x 4096 + 4096 = 2^64 + 12288: wraps to 12 KiB.
  PreallocSpec spec = Spec();
  spec.writes = 3;
  spec.stride = 2251799813685249;
  EXPECT_EQ(ErrorOf(ValidatePreallocSpec(spec)), "--stride: at most 1073741824");
  spec = Spec();
  spec.writes = kMaxPreallocWrites;
  spec.stride = kMaxPreallocStride;
  spec.block = uint64_t{1} << 40;
  auto r = ValidatePreallocSpec(spec);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().rfind("--writes x --stride x --block cover more than 16 EiB", 0), 0u)
      << r.error();
}

TEST(ValidatePreallocSpec, CountsAreBounded) {
  PreallocSpec spec = Spec();
  spec.writes = kMaxPreallocWrites + 1;
  EXPECT_EQ(ErrorOf(ValidatePreallocSpec(spec)), "--writes: at most 10000000");
  spec = Spec();
  spec.writes = -1;
  EXPECT_EQ(ErrorOf(ValidatePreallocSpec(spec)), "--writes: must be at least 1");
}

}  // namespace
}  // namespace writelab
