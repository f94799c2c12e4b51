// SPDX-License-Identifier: MIT
// The ceiling for the records experiment's io_uring method (bench/ratios.sh,
// issue 31): the minimal liburing loop for small records. The lines of
// INPUT, taken round and round until TOTAL bytes of whole lines, are copied
// into QD buffers of BUFFER bytes; a full buffer is queued, and when no
// buffer is free the ring is submitted and waited on at once
// (io_uring_submit_and_wait(1)), every ready completion reaped. At the end
// the last buffer is queued and everything waited for. Buffered writes to
// OUT (a new file: O_EXCL, O_NOFOLLOW), no sync, no timing per write, no
// statistics; a failed or short write ends it with exit 1. Prints "MB/s lines buffers" (10^6 bytes
// per second of the whole loop, from the first copy to the last completion).
//
//   bare_uring_records INPUT OUT TOTAL QD BUFFER
#include <fcntl.h>
#include <liburing.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace {

uint64_t Now() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1'000'000'000 + static_cast<uint64_t>(t.tv_nsec);
}

// The input's lines, each with its '\n' (a last line without one gets none).
std::vector<std::string_view> Lines(const std::string& text) {
  std::vector<std::string_view> lines;
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    end = end == std::string::npos ? text.size() : end + 1;
    lines.emplace_back(text.data() + at, end - at);
    at = end;
  }
  return lines;
}

struct Ring {
  io_uring ring;
  int fd;
  std::vector<std::vector<char>> bufs;
  std::vector<size_t> queued;  // bytes queued from each buffer
  std::vector<size_t> free;    // buffers not in flight
  uint64_t off = 0;
  unsigned in_flight = 0;

  // Waits for at least one completion (submitting what is queued in the
  // same call) and frees every reaped buffer. 0, -errno, or -EIO for a
  // short write.
  int Reap() {
    if (int rc = io_uring_submit_and_wait(&ring, 1); rc < 0) return rc;
    io_uring_cqe* cqe;
    unsigned head, seen = 0;
    int bad = 0;
    io_uring_for_each_cqe(&ring, head, cqe) {
      ++seen;
      const size_t b = io_uring_cqe_get_data64(cqe);
      if (cqe->res < 0)
        bad = cqe->res;
      else if (static_cast<size_t>(cqe->res) != queued[b])
        bad = -EIO;
      free.push_back(b);
    }
    io_uring_cq_advance(&ring, seen);
    in_flight -= seen;
    return bad;
  }
  void Queue(size_t b, size_t n) {
    io_uring_sqe* sqe = io_uring_get_sqe(&ring);
    io_uring_prep_write(sqe, fd, bufs[b].data(), static_cast<unsigned>(n), off);
    io_uring_sqe_set_data64(sqe, b);
    queued[b] = n;
    off += n;
    ++in_flight;
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: %s INPUT OUT TOTAL QD BUFFER\n", argv[0]);
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  const std::string corpus = text.str();
  const std::vector<std::string_view> lines = Lines(corpus);
  const uint64_t total = std::strtoull(argv[3], nullptr, 10);
  const unsigned qd = static_cast<unsigned>(std::strtoul(argv[4], nullptr, 10));
  const size_t buffer = std::strtoull(argv[5], nullptr, 10);
  for (std::string_view l : lines)
    if (l.size() > buffer) {
      std::fprintf(stderr, "a line of %zu bytes is longer than BUFFER\n", l.size());
      return 2;
    }
  Ring r;
  r.fd = open(argv[2], O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (lines.empty() || r.fd < 0 || qd == 0 || buffer == 0) {
    std::perror(argv[2]);
    return 1;
  }
  if (int rc = io_uring_queue_init(qd, &r.ring, 0); rc < 0) {
    std::fprintf(stderr, "io_uring_queue_init: %d\n", rc);
    return 1;
  }
  r.bufs.assign(qd, std::vector<char>(buffer));
  r.queued.assign(qd, 0);
  for (size_t b = 0; b < qd; ++b) r.free.push_back(b);
  const uint64_t start = Now();
  constexpr size_t kNone = ~size_t{0};
  size_t cur = kNone, used = 0;
  uint64_t written = 0, count = 0, issued = 0;
  for (size_t i = 0; written + lines[i].size() <= total; i = (i + 1) % lines.size()) {
    const std::string_view l = lines[i];
    if (cur != kNone && used + l.size() > buffer) {
      r.Queue(cur, used), ++issued;
      cur = kNone;
    }
    if (cur == kNone) {
      while (r.free.empty())
        if (int rc = r.Reap(); rc < 0) return std::fprintf(stderr, "write: %d\n", rc), 1;
      cur = r.free.back();
      r.free.pop_back();
      used = 0;
    }
    std::memcpy(r.bufs[cur].data() + used, l.data(), l.size());
    used += l.size();
    written += l.size();
    ++count;
  }
  if (cur != kNone && used) r.Queue(cur, used), ++issued;
  while (r.in_flight > 0)
    if (int rc = r.Reap(); rc < 0) return std::fprintf(stderr, "write: %d\n", rc), 1;
  const double s = static_cast<double>(Now() - start) / 1e9;
  std::printf("%.1f %llu %llu\n", static_cast<double>(written) / s / 1e6,
              static_cast<unsigned long long>(count), static_cast<unsigned long long>(issued));
  io_uring_queue_exit(&r.ring);
  close(r.fd);
  return 0;
}
