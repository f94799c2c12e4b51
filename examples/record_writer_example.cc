// SPDX-License-Identifier: MIT
// Appends log records to PATH from THREADS threads with group commit: each
// Append(.., Durable::kYes) returns once its record is on stable storage,
// and concurrent committers share fdatasyncs. Prints how many they shared.
// The file is kept extended with 1 MiB of written zeros ahead of the records
// (preallocate_bytes), so that on ext4 or xfs a commit's fdatasync has no
// size change to journal; Close() cuts the zeros off.
// Usage: record_writer_example PATH [THREADS] [RECORDS_PER_THREAD]
#include <writelab/record_writer.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s PATH [THREADS] [RECORDS_PER_THREAD]\n", argv[0]);
    return 2;
  }
  long threads = argc > 2 ? std::strtol(argv[2], nullptr, 10) : 4;
  long per = argc > 3 ? std::strtol(argv[3], nullptr, 10) : 100;
  if (threads <= 0 || per <= 0) {
    std::fprintf(stderr, "THREADS and RECORDS_PER_THREAD must be positive numbers\n");
    return 2;
  }
  writelab::RecordWriterOptions options;
  options.policy = writelab::DurabilityPolicy::kGroupCommit;
  options.preallocate_bytes = 1 << 20;
  auto writer = writelab::RecordWriter::Open(argv[1], options);
  if (!writer) {
    std::fprintf(stderr, "%s\n", writer.error().Message().c_str());
    return 1;
  }
  std::vector<std::thread> pool;
  std::vector<int> failed(static_cast<size_t>(threads), 0);
  for (long t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (long i = 0; i < per; ++i) {
        std::string record = "thread " + std::to_string(t) + " record " + std::to_string(i) + "\n";
        if (auto s = writer->Append(record, writelab::Durable::kYes); !s) {
          std::fprintf(stderr, "%s\n", s.error().Message().c_str());
          failed[static_cast<size_t>(t)] = 1;
          return;
        }
      }
    });
  }
  for (auto& th : pool) th.join();
  for (int f : failed)
    if (f) return 1;
  if (auto s = writer->Close(); !s) {
    std::fprintf(stderr, "%s\n", s.error().Message().c_str());
    return 1;
  }
  writelab::RecordWriterStats st = writer->stats();
  std::printf("%llu durable records, %llu fdatasyncs, %llu write calls\n",
              static_cast<unsigned long long>(st.records),
              static_cast<unsigned long long>(st.sync_calls),
              static_cast<unsigned long long>(st.write_calls));
  return 0;
}
