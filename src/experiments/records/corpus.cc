// SPDX-License-Identifier: MIT
#include "experiments/records/corpus.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "io/file.h"

namespace writelab {
namespace {

// Line lengths of C source, newline included, as (upper bound, share):
// measured on the 26,417 lines of the 90 .c files under /usr/share/doc of a
// Debian 12 machine with the build dependencies installed (zlib, liburing
// and other examples); mean 29.5 bytes per line. Morton's corpus, the Linux
// kernel's kernel/*.c, has the same shape: one line in seven blank, most
// between 8 and 40 bytes, a tail to 80 and a few longer. A length is drawn
// uniformly within its bucket (previous bound + 1 .. bound).
struct LengthBucket {
  uint32_t upto;
  double share;
};
constexpr LengthBucket kCSourceLineLengths[] = {
    {1, 0.1458},  {8, 0.1359},  {16, 0.0815}, {24, 0.1380}, {32, 0.1155}, {40, 0.0878},
    {48, 0.0630}, {56, 0.0461}, {64, 0.0509}, {72, 0.0533}, {80, 0.0674}, {120, 0.0147},
};

// splitmix64: the same stream on every platform and standard library.
uint64_t NextRandom(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint32_t DrawLength(uint64_t& rng) {
  double total = 0;
  for (const auto& b : kCSourceLineLengths) total += b.share;
  double u = static_cast<double>(NextRandom(rng) >> 11) / 9007199254740992.0 * total;
  uint32_t low = 1;
  for (const auto& b : kCSourceLineLengths) {
    if (u < b.share) return low + static_cast<uint32_t>(NextRandom(rng) % (b.upto - low + 1));
    u -= b.share;
    low = b.upto + 1;
  }
  return 1;
}

// Fills a line of len bytes (newline last) with tab indentation and
// C-looking text.
void FillLine(char* p, uint32_t len, uint64_t& rng) {
  static constexpr char kText[] =
      "abcdefghijklmnopqrstuvwxyz_abcdefghijklmnopqrstuvwxyz ABCDEFGHIJ0123456789(){};=*,+-<>&|";
  uint32_t body = len - 1;
  uint32_t tabs = body > 4 ? static_cast<uint32_t>(NextRandom(rng) % 4) : 0;
  uint64_t bits = 0;
  for (uint32_t i = 0; i < body; ++i) {
    if (i % 8 == 0) bits = NextRandom(rng);
    p[i] = i < tabs ? '\t' : kText[(bits >> (8 * (i % 8))) % (sizeof kText - 1)];
  }
  p[body] = '\n';
}

}  // namespace

void Corpus::Append(const char* data, uint32_t len) {
  auto* line = static_cast<Line*>(std::malloc(sizeof(Line) + len));
  if (!line) throw std::bad_alloc();
  line->next = nullptr;
  line->data = reinterpret_cast<char*>(line + 1);
  line->len = len;
  if (data) std::memcpy(line->data, data, len);
  (tail_ ? tail_->next : head_) = line;
  tail_ = line;
  ++lines_;
  bytes_ += len;
  if (len > longest_) longest_ = len;
}

Corpus::Corpus(Corpus&& other) noexcept
    : head_(std::exchange(other.head_, nullptr)),
      tail_(std::exchange(other.tail_, nullptr)),
      lines_(std::exchange(other.lines_, 0)),
      bytes_(std::exchange(other.bytes_, 0)),
      longest_(std::exchange(other.longest_, 0)) {}

Corpus::~Corpus() {
  for (Line* l = head_; l;) {
    Line* next = l->next;
    std::free(l);
    l = next;
  }
}

Corpus Corpus::Generate(uint64_t size, uint64_t seed) {
  Corpus c;
  uint64_t rng = seed;
  while (c.bytes_ < size) {
    uint32_t len = DrawLength(rng);
    c.Append(nullptr, len);
    FillLine(c.tail_->data, len, rng);
  }
  return c;
}

Result<Corpus> Corpus::Load(const std::string& path) {
  auto fd = OpenFile(path, O_RDONLY | O_NONBLOCK);  // a FIFO put there since validation: no hang
  if (!fd) return std::unexpected(fd.error());
  struct stat st;
  if (fstat(fd->get(), &st) != 0) return std::unexpected(ErrnoError(errno, "fstat " + path));
  if (!S_ISREG(st.st_mode)) return std::unexpected(PlainError(path + ": not a regular file"));
  auto too_large = [&] { return std::unexpected(PlainError(path + ": larger than 4 GiB")); };
  if (static_cast<uint64_t>(st.st_size) > kMaxBytes) return too_large();
  uint64_t total = 0;  // the file may grow while it is read
  Corpus c;
  std::string pending;  // a line split across reads
  std::vector<char> buf(1 << 20);
  for (;;) {
    ssize_t n = read(fd->get(), buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::unexpected(ErrnoError(errno, "read " + path));
    if (n == 0) break;
    total += static_cast<uint64_t>(n);
    if (total > kMaxBytes) return too_large();
    const char* p = buf.data();
    const char* end = p + n;
    while (p < end) {
      const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
      const char* stop = nl ? nl + 1 : end;
      pending.append(p, stop);
      p = stop;
      if (!nl) break;
      if (pending.size() > UINT32_MAX)
        return std::unexpected(PlainError(path + ": a line longer than 4 GiB"));
      c.Append(pending.data(), static_cast<uint32_t>(pending.size()));
      pending.clear();
    }
  }
  if (pending.size() > UINT32_MAX)
    return std::unexpected(PlainError(path + ": a line longer than 4 GiB"));
  if (!pending.empty()) c.Append(pending.data(), static_cast<uint32_t>(pending.size()));
  if (c.lines_ == 0) return std::unexpected(PlainError(path + " is empty"));
  return c;
}

OutputPlan PlanOutput(const Corpus& corpus, uint64_t total, int passes) {
  OutputPlan plan;
  if (passes > 0) {
    plan.lines = corpus.lines() * static_cast<uint64_t>(passes);
    plan.bytes = corpus.bytes() * static_cast<uint64_t>(passes);
  } else {
    uint64_t full = total / corpus.bytes();
    plan.lines = full * corpus.lines();
    plan.bytes = full * corpus.bytes();
    for (const Line* l = corpus.head(); plan.bytes < total; l = corpus.Next(l)) {
      plan.bytes += l->len;
      ++plan.lines;
    }
  }
  plan.passes = static_cast<double>(plan.bytes) / static_cast<double>(corpus.bytes());
  return plan;
}

Status VerifyOutput(const std::string& path, const Corpus& corpus, const OutputPlan& plan) {
  auto fd = OpenFile(path, O_RDONLY);
  if (!fd) return std::unexpected(fd.error());
  std::vector<char> buf(1 << 20);
  const Line* line = corpus.head();
  uint32_t in_line = 0;  // bytes of line already compared
  uint64_t lines_done = 0, at = 0;
  for (;;) {
    ssize_t n = read(fd->get(), buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::unexpected(ErrnoError(errno, "verify: read " + path));
    if (n == 0) break;
    for (size_t i = 0; i < static_cast<size_t>(n);) {
      if (lines_done == plan.lines)
        return std::unexpected(PlainError("verify: " + path + " is longer than the " +
                                          std::to_string(plan.bytes) + " bytes written"));
      size_t take = std::min<size_t>(line->len - in_line, static_cast<size_t>(n) - i);
      if (std::memcmp(buf.data() + i, line->data + in_line, take) != 0) {
        size_t k = 0;
        while (buf[i + k] == line->data[in_line + k]) ++k;
        return std::unexpected(PlainError("verify: " + path + " differs from the input at byte " +
                                          std::to_string(at + k)));
      }
      i += take;
      at += take;
      in_line += static_cast<uint32_t>(take);
      if (in_line == line->len) {
        in_line = 0;
        ++lines_done;
        line = corpus.Next(line);
      }
    }
  }
  if (lines_done != plan.lines || at != plan.bytes)
    return std::unexpected(PlainError("verify: " + path + " has " + std::to_string(at) +
                                      " bytes, expected " + std::to_string(plan.bytes)));
  return {};
}

}  // namespace writelab
