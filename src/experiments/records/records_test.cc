// SPDX-License-Identifier: MIT
// The records methods on real files, checked independently of --verify: the
// file must equal the planned lines, byte for byte, for every method and
// several sync choices; and the corpus is deterministic and C-shaped.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "expect_ok.h"
#include "experiments/records/corpus.h"
#include "experiments/records/methods.h"
#include "experiments/records/records.h"
#include "io/file.h"

#include "support.h"

namespace writelab {
namespace {

using ::writelab::testing::Slurp;
using ::writelab::testing::TempDir;
using ::writelab::testing::WriteFile;

using ::writelab::testing::ErrorOf;

std::string Expected(const Corpus& c, const OutputPlan& plan) {
  std::string out;
  const Line* l = c.head();
  for (uint64_t i = 0; i < plan.lines; ++i, l = c.Next(l)) out.append(l->data, l->len);
  return out;
}

TEST(RecordsCorpus, DeterministicAndShapedLikeCSource) {
  Corpus a = Corpus::Generate(1 << 20, 7), b = Corpus::Generate(1 << 20, 7);
  Corpus other = Corpus::Generate(1 << 20, 8);
  OutputPlan one = PlanOutput(a, a.bytes(), 0);
  EXPECT_EQ(Expected(a, one), Expected(b, one));
  EXPECT_NE(Expected(a, one), Expected(other, PlanOutput(other, other.bytes(), 0)));
  double mean = static_cast<double>(a.bytes()) / static_cast<double>(a.lines());
  EXPECT_GT(mean, 25);
  EXPECT_LT(mean, 35);
  EXPECT_LE(a.longest(), 120u);
  uint64_t blank = 0;
  for (const Line* l = a.head(); l; l = l->next) {
    ASSERT_EQ(l->data[l->len - 1], '\n');
    blank += l->len == 1;
  }
  EXPECT_NEAR(static_cast<double>(blank) / static_cast<double>(a.lines()), 0.1458, 0.02);
}

TEST(RecordsCorpus, PlanEndsOnALineAndVerifyFindsADifference) {
  Corpus c = Corpus::Generate(64 << 10, 1);
  OutputPlan p = PlanOutput(c, 100'000, 0);
  EXPECT_GE(p.bytes, 100'000u);
  EXPECT_LT(p.bytes, 100'000u + c.longest());
  EXPECT_EQ(PlanOutput(c, 1, 3).lines, 3 * c.lines());
  std::string path = "/var/tmp/writelab-corpus-test-" + std::to_string(getpid());
  std::string data = Expected(c, p);
  std::ofstream(path, std::ios::binary) << data;
  EXPECT_TRUE(VerifyOutput(path, c, p).has_value());
  data[5000] ^= 1;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << data;
  auto bad = VerifyOutput(path, c, p);
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().Message().find("at byte 5000"), std::string::npos) << bad.error().Message();
  std::ofstream(path, std::ios::binary | std::ios::trunc) << data.substr(0, 100);
  EXPECT_FALSE(VerifyOutput(path, c, p).has_value());
  std::filesystem::remove(path);
}

TEST(RecordsCorpus, LoadKeepsEveryLineAndALastLineWithoutNewline) {
  std::string path = "/var/tmp/writelab-corpus-load-" + std::to_string(getpid());
  std::ofstream(path, std::ios::binary) << "int main()\n{\n\n  return 0;\n}";
  auto c = Corpus::Load(path);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->lines(), 5u);
  EXPECT_EQ(Expected(*c, PlanOutput(*c, 0, 1)), "int main()\n{\n\n  return 0;\n}");
  std::filesystem::remove(path);
}

// --input is read whole into memory: devices, FIFOs and files over 4 GiB
// are refused on the opened descriptor, not read until memory runs out.
TEST(RecordsCorpus, LoadRefusesWhatIsNotASmallRegularFile) {
  auto zero = Corpus::Load("/dev/zero");
  ASSERT_FALSE(zero.has_value());
  EXPECT_EQ(zero.error().Message(), "/dev/zero: not a regular file");
  std::string path = "/var/tmp/writelab-corpus-huge-" + std::to_string(getpid());
  std::ofstream(path) << "x\n";
  std::filesystem::resize_file(path, Corpus::kMaxBytes + 1);  // sparse
  auto huge = Corpus::Load(path);
  ASSERT_FALSE(huge.has_value());
  EXPECT_EQ(huge.error().Message(), path + ": larger than 4 GiB");
  RecordsSpec spec;
  spec.dir = "/var/tmp";
  spec.input = path;
  EXPECT_EQ(ErrorOf(ValidateRecordsSpec(spec)), "--input: '" + path + "' is larger than 4 GiB");
  std::filesystem::remove(path);
}

class RecordsMethod : public ::testing::TestWithParam<std::tuple<RecordMethod, std::string>> {};

TEST_P(RecordsMethod, FileIsByteExact) {
  auto [method, sync_text] = GetParam();
  auto sync = ParseRecordSync(sync_text);
  ASSERT_TRUE(sync.has_value());
  Corpus corpus = Corpus::Generate(300 << 10, 3);
  OutputPlan plan = PlanOutput(corpus, 1 << 20, 0);  // 3.4 passes: wraps, ends mid-corpus
  std::string path;
  auto fd =
      CreateOwnFile("/var/tmp", "records-test", O_WRONLY | InfoOf(sync->id).open_flags, &path);
  ASSERT_TRUE(fd.has_value());
  RunContext ctx;
  MethodEnv env{corpus, plan, *sync, fd->get(), 64 << 10, 4, 0, ctx};
  MethodRun run = RunRecordMethod(method, env);
  fd->Reset();
  std::string data = Slurp(path);
  std::filesystem::remove(path);
  if (run.outcome.status == RowStatus::kUnsupported) GTEST_SKIP() << run.outcome.message;
  ASSERT_EQ(run.outcome.status, RowStatus::kOk) << run.outcome.message;
  EXPECT_EQ(data.size(), plan.bytes);
  EXPECT_TRUE(data == Expected(corpus, plan)) << "file differs from the lines";
  EXPECT_GT(run.write_calls, 0u);
  if (sync->id == RecordSync::kEvery) {
    EXPECT_EQ(run.sync_calls, (plan.lines + sync->every - 1) / sync->every);
  }
  if (method == RecordMethod::kWrite) {
    EXPECT_EQ(run.write_calls, plan.lines);
  }
  if (method == RecordMethod::kWritev) {
    EXPECT_GE(run.write_calls, plan.lines / IOV_MAX);
  }
}

INSTANTIATE_TEST_SUITE_P(
    All, RecordsMethod,
    ::testing::Combine(::testing::Values(RecordMethod::kWrite, RecordMethod::kFwrite,
                                         RecordMethod::kFwriteUnlocked, RecordMethod::kWritev,
                                         RecordMethod::kGather, RecordMethod::kUring,
                                         RecordMethod::kLibrary),
                       ::testing::Values("none", "every:1000", "end")),
    [](const auto& info) {
      std::string name =
          std::string(kRecordMethods[static_cast<int>(std::get<0>(info.param))].name) + "_" +
          std::get<1>(info.param);
      for (char& c : name)
        if (!isalnum(static_cast<unsigned char>(c))) c = '_';
      return name;
    });

TEST(RecordsSync, ParseAcceptsTheTableAndRejectsNonsense) {
  EXPECT_EQ(ParseRecordSync("every:64")->every, 64u);
  EXPECT_EQ(ParseRecordSync("osync")->id, RecordSync::kOsync);
  EXPECT_EQ(ParseRecordSync("rwf-dsync")->Name(), "rwf-dsync");
  for (const char* bad : {"every:", "every:0", "every:x", "sometimes", "every:N"})
    EXPECT_FALSE(ParseRecordSync(bad).has_value()) << bad;
}

}  // namespace
}  // namespace writelab
