// SPDX-License-Identifier: MIT
// Real programs nobody here wrote, plainly and under every strategy of
// `writelab run` (issue 40): tar, cp, rsync, dd, gzip, xz, zstd, sqlite3,
// git, split, sort, sed, awk, cpio, install, tee, appends, pipes and a
// FIFO. Each must exit as it does plainly, say the same on stderr, and
// leave byte for byte the same files. --min-file and --window are 4 MiB, so
// that every strategy takes the larger files in hand.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "harness.h"
#include "test_paths.h"

namespace writelab::testing {
namespace {

namespace fs = std::filesystem;

// name, then the commands (sh) that write $OUT/name (a file or a directory)
// from $SRC.
const std::vector<std::pair<std::string, std::string>> kPrograms = {
    {"tar-create", R"(tar -cf "$OUT/tar-create" -C "$SRC" tree)"},
    {"tar-extract", R"(mkdir "$OUT/tar-extract" && tar -xf "$SRC/tree.tar" -C "$OUT/tar-extract")"},
    {"cp", R"(cp -r "$SRC/tree" "$OUT/cp")"},
    {"cp-sparse", R"(cp --sparse=always "$SRC/sparse" "$OUT/cp-sparse")"},
    {"rsync", R"(rsync -a "$SRC/tree/" "$OUT/rsync/")"},
    {"dd", R"(dd if="$SRC/tree/big" of="$OUT/dd" bs=1M status=none)"},
    {"dd-odd", R"(dd if="$SRC/tree/big" of="$OUT/dd-odd" bs=7777 seek=3 status=none)"},
    {"gzip", R"(gzip -n -1 -c "$SRC/tree/big" > "$OUT/gzip")"},
    {"zcat", R"(zcat "$SRC/big.gz" > "$OUT/zcat")"},
    {"xz", R"(xz -T1 -0 -c "$SRC/tree/big" > "$OUT/xz")"},
    {"zstd", R"(zstd -q -1 -c "$SRC/tree/big" > "$OUT/zstd")"},
    {"sqlite3",
     R"(sqlite3 "$OUT/db" "CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT);
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 50000)
        INSERT INTO t SELECT i, printf('row %08d %x', i, i * 2654435761 % 4294967296) FROM n;
        DELETE FROM t WHERE k % 3 = 0; VACUUM;" &&
        sqlite3 "$OUT/db" .dump > "$OUT/sqlite3" && rm "$OUT/db")"},
    {"git",
     R"(export GIT_AUTHOR_DATE='2026-01-01T00:00:00Z' GIT_COMMITTER_DATE='2026-01-01T00:00:00Z';
        g="git -c user.name=t -c user.email=t@t -c init.defaultBranch=main";
        $g init -q "$OUT/repo" && cp -r "$SRC/tree/." "$OUT/repo/" &&
        $g -C "$OUT/repo" add . && $g -C "$OUT/repo" commit -q -m one &&
        $g -C "$OUT/repo" gc -q && $g -C "$OUT/repo" fsck --strict 2>&1 &&
        $g -C "$OUT/repo" rev-parse HEAD > "$OUT/git" && rm -rf "$OUT/repo")"},
    {"split", R"(mkdir "$OUT/split" && split -b 3M "$SRC/tree/big" "$OUT/split/part-")"},
    {"sort", R"(sort "$SRC/tree/lines" > "$OUT/sort")"},
    {"sed", R"(sed 's/7/seven/g' "$SRC/tree/lines" > "$OUT/sed")"},
    {"awk", R"(awk '{ s += length($0); print s }' "$SRC/tree/lines" > "$OUT/awk")"},
    {"cpio", R"(cd "$SRC" && find tree | sort | cpio -o -H newc --quiet > "$OUT/cpio")"},
    {"install", R"(install -m 640 "$SRC/tree/big" "$OUT/install")"},
    {"tee", R"(tee "$OUT/tee" < "$SRC/tree/big" > /dev/null)"},
    {"cat", R"(cat "$SRC/tree/big" "$SRC/tree/big" > "$OUT/cat")"},
    {"append",
     R"(i=0; while [ $i -lt 2000 ]; do echo "line $i" >> "$OUT/append"; i=$((i+1)); done)"},
    {"pipe", R"(cat "$SRC/tree/big" | gzip -n -1 | gzip -d > "$OUT/pipe")"},
    {"fifo",
     R"(mkfifo "$OUT/q" && (cat "$SRC/tree/big" > "$OUT/q" &) && cat "$OUT/q" > "$OUT/fifo" &&
        rm "$OUT/q")"},
};

// Every file under p (p itself when it is one), by its path below p.
std::map<std::string, std::string> Contents(const fs::path& p) {
  std::map<std::string, std::string> out;
  if (fs::is_regular_file(p)) {
    out[""] = Slurp(p);
    return out;
  }
  if (!fs::is_directory(p)) return out;
  for (const auto& e : fs::recursive_directory_iterator(p))
    if (e.is_regular_file()) out[fs::relative(e.path(), p).string()] = Slurp(e.path());
  return out;
}

class RealPrograms : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string src = work.path() + "/src";
    Shell("mkdir -p " + src + "/tree/small && cd " + src +
          " && head -c 12M /dev/urandom > tree/big && seq 1 200000 | sort -R "
          "--random-source=tree/big > "
          "tree/lines && for i in $(seq 1 40); do head -c $((i * 997)) /dev/urandom > "
          "tree/small/f$i; "
          "done && truncate -s 24M sparse && dd if=tree/big of=sparse bs=1M count=2 seek=10 "
          "conv=notrunc status=none && tar -cf tree.tar tree && gzip -n -1 -c tree/big > big.gz");
    ASSERT_TRUE(fs::exists(src + "/big.gz")) << "the sources";
    std::string script = "SRC=" + src + "; OUT=$1; mkdir -p \"$OUT\"\n";
    for (const auto& [name, body] : kPrograms)
      script += "( " + body + " ) > \"$OUT/" + name + ".stdout\" 2> \"$OUT/" + name +
                ".stderr\"; echo \"" + name + " $?\" >> \"$OUT/status\"\n";
    WriteFile(work.path() + "/programs.sh", script);
  }
  // Runs every program into work/out-NAME; under `writelab run --strategy
  // NAME` unless NAME is "none".
  std::string RunAll(const std::string& strategy) {
    const std::string out = work.path() + "/out-" + strategy;
    const std::vector<std::string> script = {"/bin/sh", work.path() + "/programs.sh", out};
    RunResult r;
    if (strategy == "none") {
      r = RunProgram(script[0], {script[1], script[2]});
    } else {
      std::vector<std::string> args = {"run", "--strategy", strategy, "--min-file",
                                       "4M",  "--window",   "4M",     "--"};
      args.insert(args.end(), script.begin(), script.end());
      r = RunWritelab(args);
    }
    EXPECT_EQ(r.exit_code, 0) << strategy << ": " << r.err.substr(0, 3000);
    return out;
  }
  ScratchDir work{"programs"};
};

TEST_F(RealPrograms, EveryProgramSeesAndWritesTheSameUnderEveryStrategy) {
  const std::string plain = RunAll("none");
  const std::string status = Slurp(plain + "/status");
  ASSERT_EQ(static_cast<size_t>(CountLines(status)), kPrograms.size()) << status;
  for (const auto& [name, body] : kPrograms) {
    EXPECT_NE(status.find(name + " 0\n"), std::string::npos)
        << name << " failed plainly:\n"
        << Slurp(plain + "/" + name + ".stderr");
  }
  for (const char* s : {"plain", "window", "window-drop", "dontcache", "drop-behind", "direct"}) {
    const std::string under = RunAll(s);
    EXPECT_EQ(Slurp(under + "/status"), status) << s << ": exit statuses";
    for (const auto& [name, body] : kPrograms) {
      for (const char* part : {"", ".stdout", ".stderr"}) {
        const auto want = Contents(plain + "/" + name + part);
        const auto got = Contents(under + "/" + name + part);
        ASSERT_EQ(got.size(), want.size()) << s << ": " << name << part << ": files";
        for (const auto& [file, bytes] : want) {
          auto it = got.find(file);
          ASSERT_NE(it, got.end()) << s << ": " << name << part << ": " << file << " missing";
          EXPECT_TRUE(it->second == bytes)
              << s << ": " << name << part << "/" << file << " differs";
        }
      }
    }
    fs::remove_all(under);
  }
}

}  // namespace
}  // namespace writelab::testing
