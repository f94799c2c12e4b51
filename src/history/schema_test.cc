// SPDX-License-Identifier: MIT
// The migration mechanism, on databases in memory: from the empty file and
// from every earlier version of the real schema (a fixture per version), and
// on a synthetic schema with a step beyond version 1 (so a step that changes
// data, one that fails, and a database newer than the steps are all tried).
#include "history/schema.h"

#include <gtest/gtest.h>

#include "core/document_json.h"
#include "expect_ok.h"
#include "fixture.h"
#include "history/sqlite.h"
#include "history/store.h"

namespace writelab {
namespace {

SqliteDb Memory() {
  sqlite3* raw = nullptr;
  EXPECT_EQ(sqlite3_open(":memory:", &raw), SQLITE_OK);
  return SqliteDb(raw);
}

int64_t Count(sqlite3* db, const char* sql) {
  auto st = Statement::Prepare(db, sql, "count");
  EXPECT_OK(st);
  if (!st) return -1;
  auto row = st->Step();
  EXPECT_TRUE(row && *row);
  auto n = st->Int(0);
  return n ? *n : -1;
}

// A run as each earlier version of the real schema held it: fixture v is
// inserted into a database at version v (none for the empty file). A new
// schema version adds its fixture here, and the test below then migrates
// from it.
const char* const kFixtures[] = {
    nullptr,  // version 0: the empty file
};
static_assert(std::size(kFixtures) == kHistorySchemaVersion,
              "a fixture for every earlier schema version");

TEST(HistorySchema, EachEarlierVersionMigratesToTheCurrentOneAndKeepsItsRuns) {
  const auto steps = HistoryMigrations();
  for (int from = 0; from < kHistorySchemaVersion; ++from) {
    SCOPED_TRACE("from version " + std::to_string(from));
    SqliteDb db = Memory();
    ASSERT_OK(Migrate(db.get(), steps.first(static_cast<size_t>(from)), ":memory:"));
    ASSERT_EQ(*SchemaVersion(db.get(), ":memory:"), from);
    if (kFixtures[from]) {
      ASSERT_OK(Exec(db.get(), kFixtures[from], "fixture"));
    }
    const int64_t kept = from == 0 ? 0 : Count(db.get(), "SELECT count(*) FROM runs");
    auto store = HistoryStore::Over(std::move(db), ":memory:");
    ASSERT_OK(store);
    EXPECT_EQ(*SchemaVersion(store->db(), ":memory:"), kHistorySchemaVersion);
    Document doc = FixedDocument();
    ASSERT_OK(store->Append(ToJson(doc), doc, "run"));
    auto runs = store->List({});
    ASSERT_OK(runs);
    EXPECT_EQ(static_cast<int64_t>(runs->size()), kept + 1);
  }
}

// A synthetic history: version 1 keeps documents, version 2 adds their size.
constexpr Migration kV1{1, "CREATE TABLE runs (id INTEGER PRIMARY KEY, doc TEXT NOT NULL);"};
constexpr Migration kV2{2,
                        "ALTER TABLE runs ADD COLUMN size INTEGER NOT NULL DEFAULT 0;"
                        "UPDATE runs SET size = length(doc);"};

TEST(HistorySchema, AStepChangesTheDataAndTheVersionTogether) {
  SqliteDb db = Memory();
  const Migration old_steps[] = {kV1};
  ASSERT_OK(Migrate(db.get(), old_steps, "h"));
  ASSERT_OK(Exec(db.get(), "INSERT INTO runs (doc) VALUES ('abc'), ('de')", "insert"));
  const Migration new_steps[] = {kV1, kV2};
  ASSERT_OK(Migrate(db.get(), new_steps, "h"));
  EXPECT_EQ(*SchemaVersion(db.get(), "h"), 2);
  EXPECT_EQ(Count(db.get(), "SELECT sum(size) FROM runs"), 5);
  ASSERT_OK(Migrate(db.get(), new_steps, "h")) << "a second time does nothing";
  EXPECT_EQ(Count(db.get(), "SELECT count(*) FROM runs"), 2);
}

TEST(HistorySchema, AFailedStepLeavesTheDatabaseAtItsVersion) {
  SqliteDb db = Memory();
  const Migration broken[] = {
      kV1, {2, "ALTER TABLE runs ADD COLUMN size INTEGER; INSERT INTO nowhere VALUES (1);"}};
  Status s = Migrate(db.get(), broken, "h");
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().Message().find("schema version 2"), std::string::npos) << s.error().Message();
  EXPECT_EQ(*SchemaVersion(db.get(), "h"), 1);
  EXPECT_EQ(Count(db.get(), "SELECT count(*) FROM pragma_table_info('runs') WHERE name = 'size'"),
            0)
      << "the step's first statement is rolled back with it";
}

TEST(HistorySchema, ANewerDatabaseIsRefused) {
  SqliteDb db = Memory();
  const Migration newer[] = {kV1, kV2};
  ASSERT_OK(Migrate(db.get(), newer, "h.sqlite"));
  const Migration older[] = {kV1};
  Status s = Migrate(db.get(), older, "h.sqlite");
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().Message(),
            "h.sqlite: schema version 2, newer than this writelab reads (1): a newer writelab "
            "wrote it");
}

TEST(HistorySchema, AnotherProgramsDatabaseIsRefusedAndLeftAlone) {
  SqliteDb db = Memory();
  ASSERT_OK(Exec(db.get(), "CREATE TABLE accounts (id INTEGER)", "theirs"));
  Status s = Migrate(db.get(), HistoryMigrations(), "x.db");
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().Message().find("not a writelab history"), std::string::npos);
  EXPECT_EQ(Count(db.get(), "SELECT count(*) FROM sqlite_schema"), 1) << "nothing added";
  SqliteDb other = Memory();
  ASSERT_OK(Exec(other.get(), "PRAGMA application_id = 1234", "theirs"));
  s = Migrate(other.get(), HistoryMigrations(), "y.db");
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().Message().find("application_id 1234"), std::string::npos);
}

}  // namespace
}  // namespace writelab
