// SPDX-License-Identifier: MIT
// The ceiling for stride's io_uring path (bench/ratios.sh, issue 31): the
// minimal liburing loop. Fill the ring to the queue depth, then
// io_uring_submit_and_wait(1), reap every ready completion, refill every
// free slot, repeat; no timing per I/O, no statistics. The offsets are
// stride's: STEP x UNIT x j, back to 0 where a BLOCK would pass SPAN.
// O_DIRECT writes of BLOCK bytes to PATH (a file of at least SPAN bytes, or
// a block device) for SECONDS: the same bytes as stride's (its own
// AlignedBuffer::FillPattern: a virtual disk may write zeros faster than
// data). Prints "MB/s writes enters" (10^6 bytes; the writes completed; the
// io_uring_enter calls made), one clock read per loop for the deadline.
//
//   bare_uring PATH STEP QD SECONDS [SPAN] [BLOCK] [UNIT]
#include <fcntl.h>
#include <liburing.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "io/file.h"

namespace {

uint64_t Now() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1'000'000'000 + static_cast<uint64_t>(t.tv_nsec);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s PATH STEP QD SECONDS [SPAN] [BLOCK] [UNIT]\n", argv[0]);
    return 2;
  }
  const uint64_t step = std::strtoull(argv[2], nullptr, 10);
  const unsigned qd = static_cast<unsigned>(std::strtoul(argv[3], nullptr, 10));
  const double seconds = std::atof(argv[4]);
  const uint64_t span = argc > 5 ? std::strtoull(argv[5], nullptr, 10) : 64ull << 20;
  const uint64_t block = argc > 6 ? std::strtoull(argv[6], nullptr, 10) : 4096;
  const uint64_t unit = argc > 7 ? std::strtoull(argv[7], nullptr, 10) : 512;
  const int fd = open(argv[1], O_WRONLY | O_DIRECT | O_CLOEXEC);
  if (fd < 0 || step == 0 || qd == 0 || block == 0 || span < block) {
    std::perror(argv[1]);
    return 1;
  }
  io_uring ring;
  if (int rc = io_uring_queue_init(qd, &ring, 0); rc < 0) {
    std::fprintf(stderr, "io_uring_queue_init: %d\n", rc);
    return 1;
  }
  writelab::AlignedBuffer buf(block * qd, 4096);
  buf.FillPattern(step);
  std::vector<char*> slots;
  for (unsigned i = 0; i < qd; ++i)
    slots.push_back(reinterpret_cast<char*>(buf.data()) + i * block);
  const uint64_t stride = step * unit;
  uint64_t j = 0, writes = 0, enters = 0;
  auto next = [&] {
    uint64_t off = stride * j++;
    if (off + block > span) j = 1, off = 0;
    return off;
  };
  auto queue = [&](char* slot) {
    io_uring_sqe* sqe = io_uring_get_sqe(&ring);
    io_uring_prep_write(sqe, fd, slot, static_cast<unsigned>(block), next());
    io_uring_sqe_set_data(sqe, slot);
  };
  for (char* s : slots) queue(s);
  const uint64_t start = Now(), end = start + static_cast<uint64_t>(seconds * 1e9);
  unsigned in_flight = qd;
  bool stopping = false;
  while (in_flight > 0) {
    if (int rc = io_uring_submit_and_wait(&ring, 1); rc < 0) {
      std::fprintf(stderr, "io_uring_submit_and_wait: %d\n", rc);
      return 1;
    }
    ++enters;
    stopping = stopping || Now() >= end;
    io_uring_cqe* cqe;
    unsigned head, seen = 0;
    io_uring_for_each_cqe(&ring, head, cqe) {
      ++seen;
      if (cqe->res != static_cast<int>(block)) {
        std::fprintf(stderr, "write: %d\n", cqe->res);
        return 1;
      }
      ++writes;
      if (stopping)
        --in_flight;
      else
        queue(static_cast<char*>(io_uring_cqe_get_data(cqe)));  // refill the freed slot
    }
    io_uring_cq_advance(&ring, seen);
  }
  const double s = static_cast<double>(Now() - start) / 1e9;
  std::printf("%.1f %llu %llu\n", static_cast<double>(writes * block) / s / 1e6,
              static_cast<unsigned long long>(writes), static_cast<unsigned long long>(enters));
  io_uring_queue_exit(&ring);
  close(fd);
  return 0;
}
