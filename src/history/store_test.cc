// SPDX-License-Identifier: MIT
// The history on a temporary database file: append, list, export byte for
// byte, import without duplicates, forget, trend, the baselines of check,
// two processes appending at once, a damaged file, a directory others can
// write, and (as root) a full and a read-only file system.
#include "history/store.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/document_json.h"
#include "expect_ok.h"
#include "fixture.h"
#include "test_paths.h"

#include "support.h"

namespace writelab {
namespace {

using ::writelab::testing::Slurp;
using ::writelab::testing::TempDir;
using ::writelab::testing::WriteFile;

// A history file in a directory of the test's own.
std::string HistoryIn(const TempDir& dir) { return dir.path() + "/history.sqlite"; }

// The fixed document as another run: its own start, kernel and label.
Document RunAt(int minute, const std::string& kernel = "6.18.0", const std::string& label = "") {
  Document doc = FixedDocument();
  doc.started_at =
      "2026-11-30T12:" + std::string(minute < 10 ? "0" : "") + std::to_string(minute) + ":00Z";
  doc.host.kernel = kernel;
  doc.label = label;
  return doc;
}

Result<HistoryStore> OpenAt(const std::string& path, bool create = true) {
  return HistoryStore::Open({path, false}, create);
}

TEST(HistoryStore, AppendListAndExportTheBytesAsWritten) {
  TempDir dir("history");
  auto store = OpenAt(HistoryIn(dir));
  ASSERT_OK(store);
  Document doc = RunAt(1, "6.18.0", "base");
  // Not the canonical text: export gives back what was appended, not a
  // rewriting of the document.
  const std::string text = nlohmann::json::parse(ToJson(doc)).dump(4) + "\n";
  auto appended = store->Append(text, doc, "run");
  ASSERT_OK(appended);
  EXPECT_FALSE(appended->duplicate);
  auto runs = store->List({});
  ASSERT_OK(runs);
  ASSERT_EQ(runs->size(), 1u);
  const StoredRun& r = runs->front();
  EXPECT_EQ(r.id, appended->id);
  EXPECT_EQ(r.source, "run");
  EXPECT_EQ(r.record.command, "stream");
  EXPECT_EQ(r.record.label, "base");
  EXPECT_EQ(r.record.kernel, "6.18.0");
  EXPECT_EQ(r.record.fs_type, "ext4");
  EXPECT_EQ(r.record.scheduler, "mq-deadline");
  EXPECT_EQ(r.record.cpus, 2);
  auto back = store->DocumentText(r.id);
  ASSERT_OK(back);
  EXPECT_EQ(*back, text);
  EXPECT_FALSE(store->DocumentText(r.id + 1).has_value());
  struct stat st;
  ASSERT_EQ(stat(HistoryIn(dir).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u) << "created 0600";
}

TEST(HistoryStore, TheSameRunIsKeptOnce) {
  TempDir dir("history");
  auto store = OpenAt(HistoryIn(dir));
  ASSERT_OK(store);
  Document doc = RunAt(1);
  auto first = store->Append(ToJson(doc), doc, "run");
  ASSERT_OK(first);
  auto again = store->Append(ToJson(doc), doc, "import /x/a.json");
  ASSERT_OK(again);
  EXPECT_TRUE(again->duplicate);
  EXPECT_EQ(again->id, first->id);
  Document other = RunAt(2);
  auto second = store->Append(ToJson(other), other, "import /x/b.json");
  ASSERT_OK(second);
  EXPECT_FALSE(second->duplicate);
  EXPECT_EQ(store->List({})->size(), 2u);
}

TEST(HistoryStore, ListFiltersAndForget) {
  TempDir dir("history");
  auto store = OpenAt(HistoryIn(dir));
  ASSERT_OK(store);
  for (int i = 0; i < 3; ++i) {
    Document doc = RunAt(i, i < 2 ? "6.1.0-18-amd64" : "6.12.9", i == 1 ? "tuned" : "");
    ASSERT_OK(store->Append(ToJson(doc), doc, "run"));
  }
  EXPECT_EQ(store->List({"", "6.1.0-18-amd64", ""})->size(), 2u);
  EXPECT_EQ(store->List({"", "6.1*", ""})->size(), 3u) << "a prefix: 6.1... and 6.12...";
  EXPECT_EQ(store->List({"", "6.12*", ""})->size(), 1u);
  EXPECT_EQ(store->List({"", "", "tuned"})->size(), 1u);
  EXPECT_EQ(store->List({"box", "", ""})->size(), 3u);
  EXPECT_EQ(store->List({"other", "", ""})->size(), 0u);
  auto runs = store->List({});
  ASSERT_OK(runs);
  const int64_t id = (*runs)[1].id;
  auto forgot = store->Forget(id);
  ASSERT_OK(forgot);
  EXPECT_TRUE(*forgot);
  EXPECT_FALSE(*store->Forget(id)) << "not there any more";
  EXPECT_EQ(store->List({})->size(), 2u);
  auto figures =
      Statement::Prepare(store->db(), "SELECT count(*) FROM figures WHERE run_id = ?", "count");
  ASSERT_OK(figures);
  figures->Bind(1, id);
  ASSERT_TRUE(*figures->Step());
  EXPECT_EQ(*figures->Int(0), 0) << "its figures went with it";
}

TEST(HistoryStore, TrendFollowsAFigureAcrossRunsInOrder) {
  TempDir dir("history");
  auto store = OpenAt(HistoryIn(dir));
  ASSERT_OK(store);
  // Appended out of order: the trend is by start time.
  for (int minute : {3, 1, 2}) {
    Document doc = RunAt(minute, "6." + std::to_string(minute), "m" + std::to_string(minute));
    doc.experiments[0].rows[0].figures[0].value = Summarize({100.0 * minute, 101.0 * minute});
    ASSERT_OK(store->Append(ToJson(doc), doc, "run"));
  }
  auto points = store->Trend({"stream", "mb_s", "plain", {}});
  ASSERT_OK(points);
  ASSERT_EQ(points->size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ((*points)[i].label, "m" + std::to_string(i + 1));
    EXPECT_EQ((*points)[i].kernel, "6." + std::to_string(i + 1));
    EXPECT_EQ((*points)[i].series, "plain");
    EXPECT_EQ((*points)[i].n, 2);
    EXPECT_EQ((*points)[i].samples.size(), 2u);
    EXPECT_DOUBLE_EQ((*points)[i].min, 100.0 * (i + 1));
  }
  EXPECT_TRUE(store->Trend({"stream", "mb_s", "dontcache", {}})->empty()) << "not measured";
  EXPECT_TRUE(store->Trend({"stream", "nope", "", {}})->empty());
  EXPECT_EQ(*store->Known(""), std::vector<std::string>{"stream"});
}

TEST(HistoryStore, CheckBaselinesAreTheSameMachineOrTheLabel) {
  TempDir dir("history");
  auto store = OpenAt(HistoryIn(dir));
  ASSERT_OK(store);
  Document base = RunAt(1, "6.1", "before");
  Document other_disk = RunAt(2);
  other_disk.experiments[0].target.device = "nvme0n1";
  Document newest = RunAt(3, "6.2");
  for (Document* d : {&base, &other_disk, &newest}) ASSERT_OK(store->Append(ToJson(*d), *d, "run"));
  auto last = store->Newest();
  ASSERT_OK(last);
  ASSERT_TRUE(last->has_value());
  EXPECT_EQ((*last)->record.kernel, "6.2");
  auto prev = store->PreviousOnSameMachine(**last);
  ASSERT_OK(prev);
  ASSERT_TRUE(prev->has_value());
  EXPECT_EQ((*prev)->record.label, "before") << "the run on another disk is skipped";
  auto labelled = store->LatestLabelled("before", **last);
  ASSERT_OK(labelled);
  ASSERT_TRUE(labelled->has_value());
  EXPECT_FALSE(store->LatestLabelled("nobody", **last)->has_value());
}

// Two processes appending at once: every run lands, none twice.
TEST(HistoryStore, TwoProcessesAppendAtOnce) {
  TempDir dir("history");
  ASSERT_OK(OpenAt(HistoryIn(dir)));  // created; both children open it
  constexpr int kEach = 30;
  pid_t children[2];
  for (int c = 0; c < 2; ++c) {
    children[c] = fork();
    ASSERT_GE(children[c], 0);
    if (children[c] == 0) {
      auto store = OpenAt(HistoryIn(dir));
      if (!store) _exit(10);
      for (int i = 0; i < kEach; ++i) {
        Document doc = RunAt(0);
        doc.started_at = "2026-12-0" + std::to_string(c + 1) + "T00:00:" + std::to_string(i) + "Z";
        if (!store->Append(ToJson(doc), doc, "run")) _exit(11);
      }
      _exit(0);
    }
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  }
  auto store = OpenAt(HistoryIn(dir));
  ASSERT_OK(store);
  EXPECT_EQ(store->List({})->size(), 2u * kEach);
  EXPECT_EQ(store->Trend({"stream", "mb_s", "", {}})->size(), 2u * kEach);
}

TEST(HistoryStore, ADamagedFileIsReportedWithItsPathAndLeftAsItWas) {
  TempDir dir("history");
  const std::string garbage(8192, 'x');
  {
    std::ofstream out(HistoryIn(dir), std::ios::binary);
    out << garbage;
  }
  chmod(HistoryIn(dir).c_str(), 0600);
  auto store = OpenAt(HistoryIn(dir));
  ASSERT_FALSE(store.has_value());
  const std::string message = store.error().Message();
  EXPECT_NE(message.find(HistoryIn(dir)), std::string::npos) << message;
  EXPECT_NE(message.find("not a database"), std::string::npos) << message;
  EXPECT_EQ(Slurp(HistoryIn(dir)), garbage) << "a damaged history is not overwritten";
}

TEST(HistoryStore, AMissingFileIsCreatedOnlyWhenAsked) {
  TempDir dir("history");
  auto store = OpenAt(HistoryIn(dir), false);
  ASSERT_FALSE(store.has_value());
  EXPECT_NE(store.error().Message().find("no history there"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(HistoryIn(dir)));
}

TEST(HistoryStore, ADirectoryOthersCanWriteIsRefused) {
  TempDir dir("history");
  ASSERT_EQ(chmod(dir.path().c_str(), 0777), 0);
  auto store = OpenAt(HistoryIn(dir));
  ASSERT_FALSE(store.has_value());
  EXPECT_NE(store.error().Message().find("writable by group or others"), std::string::npos)
      << store.error().Message();
  EXPECT_FALSE(std::filesystem::exists(HistoryIn(dir))) << "nothing created there";
}

TEST(HistoryStore, AnotherUsersFileIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: a file owned by nobody";
  TempDir dir("history");
  ASSERT_OK(OpenAt(HistoryIn(dir)));
  ASSERT_EQ(chown(HistoryIn(dir).c_str(), 65534, 65534), 0);
  auto store = OpenAt(HistoryIn(dir));
  ASSERT_FALSE(store.has_value());
  EXPECT_NE(store.error().Message().find("owned by uid 65534"), std::string::npos)
      << store.error().Message();
}

TEST(HistoryStore, DefaultDirectoriesAreCreatedPrivate) {
  TempDir dir("history");
  const std::string path = dir.path() + "/share/writelab/history.sqlite";
  auto store = HistoryStore::Open({path, true}, true);
  ASSERT_OK(store);
  struct stat st;
  ASSERT_EQ(stat((dir.path() + "/share/writelab").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  auto named = HistoryStore::Open({dir.path() + "/missing/history.sqlite", false}, true);
  EXPECT_FALSE(named.has_value()) << "a named file's directory is not made up";
}

// What the fuzz target does (tests/fuzz/history_fuzz.cc), on its seed and
// on damaged copies of it: every query answers or says why.
TEST(HistoryStore, ADatabaseFromBytesIsReadWithChecks) {
  const std::string seed =
      Slurp(std::string(WRITELAB_GOLDEN_DIR) + "/../fuzz/corpus/history/two-runs.sqlite");
  ASSERT_GT(seed.size(), 4096u);
  auto store = HistoryStore::FromBytes(seed);
  ASSERT_OK(store);
  auto runs = store->List({});
  ASSERT_OK(runs);
  ASSERT_EQ(runs->size(), 2u);
  for (const StoredRun& r : *runs) {
    auto text = store->DocumentText(r.id);
    ASSERT_OK(text);
    EXPECT_OK(FromJson(*text));
  }
  int answered = 0, refused = 0;
  for (size_t at = 100; at < seed.size(); at += 211) {
    std::string damaged = seed;
    damaged[at] = static_cast<char>(damaged[at] ^ 0x5a);
    auto copy = HistoryStore::FromBytes(damaged);
    if (!copy) {
      ++refused;
      EXPECT_FALSE(copy.error().Message().empty());
      continue;
    }
    auto listed = copy->List({});
    if (listed)
      for (const StoredRun& r : *listed)
        if (auto text = copy->DocumentText(r.id); text) (void)FromJson(*text);
    auto points = copy->Trend({"prealloc", "workload_s", "", {}});
    answered += listed.has_value() && points.has_value();
    refused += !listed.has_value() || !points.has_value();
  }
  EXPECT_GT(answered + refused, 100);
}

// As root: a small tmpfs of the test's own, filled, then made read-only.
TEST(HistoryStore, AFullOrReadOnlyFileSystemFailsTheAppendAndKeepsTheRest) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: mounts a 512 KiB tmpfs";
  TempDir dir("history");
  const std::string mnt = dir.path() + "/small";
  ASSERT_EQ(mkdir(mnt.c_str(), 0700), 0);
  ASSERT_EQ(mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=512k,mode=0700"), 0) << strerror(errno);
  const std::string path = mnt + "/history.sqlite";
  int kept = 0;
  Error full;
  {
    auto store = OpenAt(path);
    ASSERT_OK(store);
    Document doc = RunAt(0);
    doc.experiments[0].notes.push_back(std::string(20000, 'n'));  // about 20 KiB a run
    for (int i = 0; i < 200; ++i) {
      doc.started_at = "2026-12-01T00:00:" + std::to_string(i) + "Z";
      auto appended = store->Append(ToJson(doc), doc, "run");
      if (!appended) {
        full = appended.error();
        break;
      }
      ++kept;
    }
    EXPECT_EQ(full.code, ENOSPC) << full.Message();
    EXPECT_NE(full.Message().find(path), std::string::npos) << full.Message();
    EXPECT_GT(kept, 3);
    EXPECT_EQ(store->List({})->size(), static_cast<size_t>(kept)) << "the runs before are kept";
  }
  ASSERT_EQ(mount(nullptr, mnt.c_str(), nullptr, MS_REMOUNT | MS_RDONLY, nullptr), 0)
      << strerror(errno);
  {
    auto store = OpenAt(path);
    if (store) {
      Document doc = RunAt(59);
      auto appended = store->Append(ToJson(doc), doc, "run");
      ASSERT_FALSE(appended.has_value());
      EXPECT_EQ(appended.error().code, EROFS) << appended.error().Message();
      EXPECT_EQ(store->List({})->size(), static_cast<size_t>(kept));
    } else {
      EXPECT_NE(store.error().Message().find(path), std::string::npos);
    }
  }
  EXPECT_EQ(umount(mnt.c_str()), 0) << strerror(errno);
}

}  // namespace
}  // namespace writelab
