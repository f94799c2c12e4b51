// SPDX-License-Identifier: MIT
#include "experiments/fsync/mitigation.h"

#include <gtest/gtest.h>

#include "telemetry/procfs.h"

namespace writelab {
namespace {

TEST(Mitigation, EachFormParses) {
  EXPECT_EQ(ParseMitigation("none")->kind, MitigationKind::kNone);
  auto wbt = ParseMitigation("wbt=2ms");
  ASSERT_TRUE(wbt);
  EXPECT_EQ(wbt->kind, MitigationKind::kWbt);
  EXPECT_EQ(wbt->wbt_usec, 2000u);
  EXPECT_EQ(wbt->name, "wbt=2ms");
  EXPECT_EQ(ParseMitigation("wbt=off")->wbt_usec, 0u);
  EXPECT_EQ(ParseMitigation("bdi=256M")->bdi_bytes, 256u << 20);
  EXPECT_EQ(ParseMitigation("bg=window-drop")->style, StreamStyle::kWindowDrop);
  EXPECT_EQ(ParseMitigation("bg=dontcache")->style, StreamStyle::kDontcache);
  EXPECT_EQ(ParseMitigation("scheduler=bfq")->scheduler, "bfq");
  auto lat = ParseMitigation("cgroup=io.latency:10ms");
  ASSERT_TRUE(lat);
  EXPECT_EQ(lat->cgroup_file, "io.latency");
  EXPECT_EQ(lat->cgroup_value, "target=10000");
  EXPECT_EQ(ParseMitigation("cgroup=io.max:wbps=100M")->cgroup_value, "wbps=104857600");
  EXPECT_EQ(ParseMitigation("cgroup=io.max:wiops=500")->cgroup_value, "wiops=500");
}

TEST(Mitigation, BadFormsSayWhatIsExpected) {
  for (const char* bad :
       {"wbt=", "wbt=fast", "wbt=0", "bdi=4k", "bg=plain", "scheduler=", "scheduler=../x",
        "cgroup=io.weight:100", "cgroup=io.max:bps=1", "cgroup=io.latency:0", "nice=5", ""}) {
    auto m = ParseMitigation(bad);
    EXPECT_FALSE(m) << bad;
    if (!m) {
      EXPECT_TRUE(m.error().starts_with("--mitigation: '")) << m.error();
    }
  }
}

TEST(Mitigation, NoneAndBackgroundStylesChangeNothing) {
  auto none = ApplyMitigation(*ParseMitigation("none"), "vda", nullptr);
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->changes.empty());
  auto bg = ApplyMitigation(*ParseMitigation("bg=dontcache"), "", nullptr);
  ASSERT_TRUE(bg);
  EXPECT_TRUE(bg->changes.empty());
  auto wbt = ApplyMitigation(*ParseMitigation("wbt=2ms"), "", nullptr);
  ASSERT_FALSE(wbt);
  EXPECT_TRUE(wbt.error().unsupported) << "no device under the target";
}

// bfq turns wbt off where the kernel has it (this one has not): the note
// blames bfq only when wbt reads 0 under bfq.
TEST(Mitigation, TheBfqNoteOnlyWhereBfqTurnedWbtOff) {
  EXPECT_EQ(SchedulerWbtNote("bfq", "0"),
            "under bfq, wbt_lat_usec reads 0 (bfq turns writeback throttling off)");
  EXPECT_EQ(SchedulerWbtNote("bfq", "2000"), "under bfq, wbt_lat_usec reads 2000");
  EXPECT_EQ(SchedulerWbtNote("kyber", "2000"), "under kyber, wbt_lat_usec reads 2000");
  EXPECT_EQ(SchedulerWbtNote("kyber", "0"),
            "under kyber, wbt_lat_usec reads 0 (writeback throttling is off)");
}

// cgroup= where the machine has no cgroup v2 io controller (this one: v1
// blkio holds it) is a refusal that says so; where it has one, the
// mechanism is testbed/cgroup_test.cc's.
TEST(Mitigation, ACgroupWithoutAnIoControllerIsUnsupportedWithTheReason) {
  auto place = FindCgroupPlace();
  if (place && ListsController(ReadLine(place->root + "/cgroup.controllers").value_or(""), "io"))
    GTEST_SKIP() << "this machine's cgroup v2 has the io controller";
  auto refused = ApplyMitigation(*ParseMitigation("cgroup=io.max:wbps=1M"), "vda", nullptr);
  ASSERT_FALSE(refused);
  EXPECT_TRUE(refused.error().unsupported);
  EXPECT_NE(refused.error().error.Message().find("cgroup"), std::string::npos)
      << refused.error().error.Message();
}

}  // namespace
}  // namespace writelab
