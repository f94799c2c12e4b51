// SPDX-License-Identifier: MIT
// Writes SIZE MiB of data to PATH with writelab::StreamWriter and prints the
// method it picked. Usage: stream_writer_example PATH [SIZE_MIB]
#include <writelab/stream_writer.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s PATH [SIZE_MIB]\n", argv[0]);
    return 2;
  }
  long mib = argc > 2 ? std::strtol(argv[2], nullptr, 10) : 64;
  if (mib <= 0) {
    std::fprintf(stderr, "SIZE_MIB must be a positive number\n");
    return 2;
  }
  auto writer = writelab::StreamWriter::Open(argv[1]);
  if (!writer) {
    std::fprintf(stderr, "%s\n", writer.error().Message().c_str());
    return 1;
  }
  // Any buffer size works; 1 MiB chunks of a byte pattern here.
  std::vector<std::byte> chunk(1 << 20);
  for (size_t i = 0; i < chunk.size(); ++i) chunk[i] = static_cast<std::byte>(i * 31 + 7);
  for (long i = 0; i < mib; ++i) {
    if (auto s = writer->Append(chunk); !s) {
      std::fprintf(stderr, "%s\n", s.error().Message().c_str());
      return 1;
    }
  }
  if (auto s = writer->Finish(); !s) {
    std::fprintf(stderr, "%s\n", s.error().Message().c_str());
    return 1;
  }
  std::printf("wrote %llu bytes with %s\n",
              static_cast<unsigned long long>(writer->bytes_appended()), writer->choice().c_str());
  return 0;
}
