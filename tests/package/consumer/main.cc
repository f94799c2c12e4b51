// SPDX-License-Identifier: MIT
// A program of a library user's own, built against an installed writelab
// (find_package, pkg-config, a plain g++ line) or the source tree
// (add_subdirectory) by tests/package/run.sh. It streams 4 MiB with
// StreamWriter, commits three records with RecordWriter, writes a framed log
// over space made by Preallocate and reads it back with LogReader, all in
// DIR, and checks every byte. Usage: consumer DIR
#include <fcntl.h>
#include <unistd.h>
#include <writelab/log_reader.h>
#include <writelab/preallocate.h>
#include <writelab/record_writer.h>
#include <writelab/stream_writer.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

int Fail(const std::string& what) {
  std::fprintf(stderr, "consumer: %s\n", what.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return Fail("usage: consumer DIR");
  const std::string dir = argv[1];

  auto stream = writelab::StreamWriter::Open(dir + "/stream");
  if (!stream) return Fail(stream.error().Message());
  std::vector<std::byte> block(1 << 20, std::byte{'w'});
  for (int i = 0; i < 4; ++i)
    if (auto s = stream->Append(block); !s) return Fail(s.error().Message());
  if (auto s = stream->Finish(); !s) return Fail(s.error().Message());
  if (Slurp(dir + "/stream") != std::string(4 << 20, 'w')) return Fail("stream: content differs");

  auto log = writelab::RecordWriter::Open(dir + "/log");
  if (!log) return Fail(log.error().Message());
  for (const char* record : {"one\n", "two\n", "three\n"})
    if (auto s = log->Append(record, writelab::Durable::kYes); !s) return Fail(s.error().Message());
  if (auto s = log->Close(); !s) return Fail(s.error().Message());
  if (Slurp(dir + "/log") != "one\ntwo\nthree\n") return Fail("log: content differs");

  {
    writelab::UniqueFd fd(
        ::open((dir + "/zeros").c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600));
    auto p = writelab::Preallocate(fd.get(), 0, 1 << 20, writelab::PreallocateMode::kBest);
    if (!p) return Fail(p.error().Message());
    if (p->why.empty()) return Fail("Preallocate: no reason given");
  }
  writelab::RecordWriterOptions framed;
  framed.framing = writelab::RecordFraming::kLengthCrc32c;
  auto wal = writelab::RecordWriter::Open(dir + "/wal", framed);
  if (!wal) return Fail(wal.error().Message());
  auto lsn = wal->Append("framed");
  if (!lsn || *lsn != 14) return Fail("Append: not the LSN 14");
  if (auto s = wal->SyncTo(lsn.value()); !s) return Fail(s.error().Message());
  if (auto s = wal->Close(); !s) return Fail(s.error().Message());
  auto reader = writelab::LogReader::Open(dir + "/wal");
  if (!reader) return Fail(reader.error().Message());
  auto record = reader->Next();
  if (!record || !*record || (*record)->size() != 6) return Fail("LogReader: not the record");
  if (!reader->Next() || reader->end_reason() != writelab::LogEnd::kEndOfFile)
    return Fail("LogReader: not the end");

  std::printf("consumer: %s; 3 durable records; one framed record\n", stream->choice().c_str());
  return 0;
}
