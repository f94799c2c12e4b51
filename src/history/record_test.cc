// SPDX-License-Identifier: MIT
#include "history/record.h"

#include <gtest/gtest.h>

#include <cmath>

#include "expect_ok.h"
#include "fixture.h"

namespace writelab {
namespace {

TEST(HistoryRecord, CommandIsTheFirstWordAfterTheProgram) {
  EXPECT_EQ(CommandOf("writelab records --dir x"), "records");
  EXPECT_EQ(CommandOf("/usr/bin/writelab --no-history survey --dir ."), "survey");
  EXPECT_EQ(CommandOf("WRITELAB_FAULT=sync:1:EIO writelab stream --size 1G"), "stream");
  EXPECT_EQ(CommandOf("writelab"), "");
  EXPECT_EQ(CommandOf(""), "");
}

TEST(HistoryRecord, FingerprintsNameTheMachineAndTheDiskNotWhatChanges) {
  Document doc = FixedDocument();
  doc.host.cpu_model = "  Intel(R) Xeon(R) CPU  ";
  doc.experiments[0].target.model = "QEMU HARDDISK   ";
  doc.experiments[0].target.firmware = "2.5+";
  RunRecord a = RunRecordOf(doc);
  EXPECT_EQ(a.command, "stream");
  EXPECT_EQ(a.host_fingerprint, "box x86_64 Intel(R) Xeon(R) CPU 2 CPUs 23 GiB");
  EXPECT_EQ(a.target_fingerprint, "ext4 on vda QEMU HARDDISK");
  EXPECT_EQ(a.firmware, "2.5+");
  // A new kernel reserving a little more memory, another scheduler, other
  // mount options and firmware: still the same machine and disk.
  doc.host.kernel = "6.19.0";
  doc.host.memory_bytes -= 30 << 20;
  doc.experiments[0].target.scheduler = "bfq";
  doc.experiments[0].target.mount_options = "rw,noatime";
  doc.experiments[0].target.firmware = "2.6";
  RunRecord b = RunRecordOf(doc);
  EXPECT_EQ(b.host_fingerprint, a.host_fingerprint);
  EXPECT_EQ(b.target_fingerprint, a.target_fingerprint);
  EXPECT_EQ(b.kernel, "6.19.0");
  EXPECT_EQ(b.scheduler, "bfq");
}

TEST(HistoryRecord, TheTargetIsTheFirstExperimentNotOnATestBed) {
  Document doc = FixedDocument();
  ExperimentResult bed = doc.experiments[0];
  bed.testbed = "xfs";
  bed.target.fs_type = "xfs";
  doc.experiments.insert(doc.experiments.begin(), bed);
  EXPECT_EQ(RunRecordOf(doc).fs_type, "ext4");
  doc.experiments.pop_back();
  EXPECT_EQ(RunRecordOf(doc).fs_type, "xfs") << "only test beds: the first";
}

TEST(HistoryRecord, FiguresOfOkRowsOnlyWithTheirTrials) {
  Document doc = FixedDocument();
  std::vector<FigureRecord> f = FigureRecordsOf(doc);
  ASSERT_EQ(f.size(), 4u)
      << "plain's three figures and its probe's p50 over the calls (6: too few for p99); "
         "dontcache was not measured";
  EXPECT_EQ(f[0].experiment, "stream");
  EXPECT_EQ(f[0].row, "plain");
  EXPECT_EQ(f[0].figure, "mb_s");
  EXPECT_EQ(f[0].n, 3);
  EXPECT_EQ(f[0].median, 494);
  EXPECT_EQ(f[0].min, 411);
  EXPECT_EQ(f[0].max, 1853);
  EXPECT_EQ(f[0].samples, (std::vector<double>{494, 411, 1853}));
  EXPECT_EQ(f[0].mpi_rank, -1);
  EXPECT_EQ(f[3].figure, "probe_calls_p50_ms");
  EXPECT_EQ(f[3].label, "bystander probe p50 (calls merged)");
  EXPECT_EQ(f[3].unit, "ms");
  EXPECT_NEAR(f[3].median, 0.003, 0.0001);
  EXPECT_EQ(f[3].n, 1);
}

TEST(HistorySamples, RoundTripKeepsValuesAndNotFinite) {
  std::vector<double> v = {12.5, 13, 0.000125, -1e300, NAN};
  std::string text = SamplesToJson(v);
  auto back = SamplesFromJson(text);
  ASSERT_OK(back);
  ASSERT_EQ(back->size(), v.size());
  for (size_t i = 0; i + 1 < v.size(); ++i) EXPECT_EQ((*back)[i], v[i]);
  EXPECT_TRUE(std::isnan(back->back()));
  EXPECT_EQ(SamplesToJson(*back), text);
}

TEST(HistorySamples, AnythingButAFlatArrayOfNumbersIsRefused) {
  for (const char* bad :
       {"", "{}", "[1,\"2\"]", "[[1]]", "[true]", "1", "[1,", "[1e999]", "[{\"a\":1}]"}) {
    auto v = SamplesFromJson(bad);
    EXPECT_FALSE(v.has_value()) << bad;
    if (!v) {
      EXPECT_TRUE(v.error().starts_with("samples: ")) << v.error();
    }
  }
  std::string many = "[";
  for (int i = 0; i <= 1000; ++i) many += (i ? ",1" : "1");
  EXPECT_FALSE(SamplesFromJson(many + "]").has_value()) << "more than kMaxSamples";
  std::string nested(20000, '[');
  EXPECT_FALSE(SamplesFromJson(nested).has_value());
}

}  // namespace
}  // namespace writelab
