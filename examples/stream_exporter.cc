// SPDX-License-Identifier: MIT
// A streaming exporter on writelab::StreamWriter: writes a large export
// (a table as CSV, or whatever arrives on standard input) to a file at
// close to the device's speed, without leaving the page cache full of it.
//
//   stream_exporter OUT ROWS   export ROWS generated rows as CSV
//   stream_exporter OUT -      copy standard input to OUT
//
// StreamWriter picks the best method the kernel and file system accept
// (RWF_DONTCACHE, a sync_file_range window with fadvise DONTNEED, or
// O_DIRECT) and says which; the export is durable when Finish() returns.
// Output: "key: value" lines: bytes, rows, the method and why, MB/s.
#include <time.h>
#include <unistd.h>
#include <writelab/stream_writer.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <vector>

namespace {

double Now() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

// Appends rows [from, from + n) of the generated table to out.
void Rows(long long from, long long n, std::string& out) {
  char line[96];
  for (long long id = from; id < from + n; ++id) {
    int len = std::snprintf(line, sizeof line, "%lld,customer-%05lld,%lld.%02lld\n", id,
                            id % 100000, id * 37 % 100000, id % 100);
    out.append(line, static_cast<size_t>(len));
  }
}

writelab::Status ExportRows(writelab::StreamWriter& w, long long rows) {
  std::string chunk = "id,name,amount\n";
  for (long long done = 0; done < rows;) {
    const long long n = std::min<long long>(rows - done, 20000);  // about 600 KiB per Append
    Rows(done, n, chunk);
    done += n;
    if (auto s = w.Append(std::as_bytes(std::span(chunk.data(), chunk.size()))); !s) return s;
    chunk.clear();
  }
  return {};
}

writelab::Status ExportStdin(writelab::StreamWriter& w) {
  std::vector<std::byte> buf(1 << 20);
  for (;;) {
    ssize_t n = read(STDIN_FILENO, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return writelab::Unexpected(writelab::ErrnoError(errno, "read standard input"));
    if (n == 0) return {};
    if (auto s = w.Append(std::span(buf.data(), static_cast<size_t>(n))); !s) return s;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const bool from_stdin = argc == 3 && std::strcmp(argv[2], "-") == 0;
  const long long rows = argc == 3 && !from_stdin ? std::strtoll(argv[2], nullptr, 10) : -1;
  if (argc != 3 || (!from_stdin && rows < 0)) {
    std::fprintf(stderr, "usage: %s OUT ROWS | %s OUT -\n", argv[0], argv[0]);
    return 2;
  }
  auto writer = writelab::StreamWriter::Open(argv[1]);
  if (!writer) {
    std::fprintf(stderr, "%s\n", writer.error().Message().c_str());
    return 1;
  }
  const double t0 = Now();
  writelab::Status s = from_stdin ? ExportStdin(*writer) : ExportRows(*writer, rows);
  if (s) s = writer->Finish();  // durable from here
  if (!s) {
    std::fprintf(stderr, "%s\n", s.error().Message().c_str());
    return 1;
  }
  const double secs = Now() - t0;
  const auto bytes = static_cast<double>(writer->bytes_appended());
  std::printf("bytes: %llu\n", static_cast<unsigned long long>(writer->bytes_appended()));
  if (!from_stdin) std::printf("rows: %lld\n", rows);
  std::printf("method: %s\n", writer->choice().c_str());
  std::printf("throughput: %.1f MB/s (%.3f s, the writes and Finish's fsync)\n", bytes / secs / 1e6,
              secs);
  return 0;
}
