// SPDX-License-Identifier: MIT
// The workloads tests/explain_truth_test.cc explains and traces, built as
// `wl_truth` so that the independent tracer can find its threads by name:
//
//   wl_truth fdatasync N DIR   N x (4 KiB pwrite at the next offset + fdatasync)
//   wl_truth fopen N DIR       N x (fopen for append, 100 bytes, fflush, fsync, fclose)
//   wl_truth sqlite N DIR      N transactions as SQLite's rollback journal makes them:
//                              the journal written and fsynced, a 4 KiB page of the
//                              database written in place and fsynced, the journal
//                              deleted
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

int Fail(const char* what) {
  std::perror(what);
  return 1;
}

int Fdatasync(int n, const std::string& dir) {
  const int fd = open((dir + "/fdatasync.dat").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return Fail("open");
  char block[4096];
  std::memset(block, 'd', sizeof block);
  for (int i = 0; i < n; ++i) {
    if (pwrite(fd, block, sizeof block, static_cast<off_t>(i) * 4096) != 4096)
      return Fail("pwrite");
    if (fdatasync(fd) != 0) return Fail("fdatasync");
  }
  return close(fd) == 0 ? 0 : Fail("close");
}

int Fopen(int n, const std::string& dir) {
  const std::string path = dir + "/fopen.log";
  for (int i = 0; i < n; ++i) {
    std::FILE* f = std::fopen(path.c_str(), "a");
    if (!f) return Fail("fopen");
    std::fprintf(f, "%08d the quick brown fox jumps over the lazy dog, again and again %020d\n", i,
                 i);
    if (std::fflush(f) != 0 || fsync(fileno(f)) != 0) return Fail("fsync");
    if (std::fclose(f) != 0) return Fail("fclose");
  }
  return 0;
}

int Sqlite(int n, const std::string& dir) {
  const std::string db = dir + "/test.db", journal = dir + "/test.db-journal";
  const int dbfd = open(db.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (dbfd < 0) return Fail("open db");
  char page[4096 + 512];
  std::memset(page, 's', sizeof page);
  constexpr int kPages = 1024;  // a 4 MiB database
  if (ftruncate(dbfd, kPages * 4096) != 0) return Fail("ftruncate");
  unsigned seed = 7;
  for (int i = 0; i < n; ++i) {
    const int j = open(journal.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (j < 0) return Fail("open journal");
    if (write(j, page, sizeof page) != static_cast<ssize_t>(sizeof page) || fsync(j) != 0)
      return Fail("journal");
    const off_t at = static_cast<off_t>(rand_r(&seed) % kPages) * 4096;
    if (pwrite(dbfd, page, 4096, at) != 4096 || fsync(dbfd) != 0) return Fail("db");
    if (close(j) != 0 || unlink(journal.c_str()) != 0) return Fail("delete journal");
  }
  return close(dbfd) == 0 ? 0 : Fail("close");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: wl_truth fdatasync|fopen|sqlite N DIR\n");
    return 2;
  }
  const std::string mode = argv[1], dir = argv[3];
  const int n = std::atoi(argv[2]);
  if (mode == "fdatasync") return Fdatasync(n, dir);
  if (mode == "fopen") return Fopen(n, dir);
  if (mode == "sqlite") return Sqlite(n, dir);
  std::fprintf(stderr, "wl_truth: unknown mode %s\n", argv[1]);
  return 2;
}
