// SPDX-License-Identifier: MIT
// The corpus of `writelab records`: a text buffer held as a linked list of
// separately allocated lines ({next, length, data}), as in Morton's
// writev-speed.c, so that gathering is honest: no method finds the lines
// contiguous in memory.
#pragma once

#include <cstdint>
#include <expected>
#include <memory>
#include <string>

#include "writelab/error.h"

namespace writelab {

// One allocation per line: the struct, then its bytes (data points there).
struct Line {
  Line* next;
  char* data;
  uint32_t len;  // bytes of data, the newline included when the line has one
};

class Corpus {
 public:
  // The largest input Load reads, as --corpus-size's bound.
  static constexpr uint64_t kMaxBytes = uint64_t{4} << 30;
  // The lines of path; an empty file, one that is not regular (checked on
  // the opened descriptor) or larger than kMaxBytes is an error.
  static Result<Corpus> Load(const std::string& path);
  // About size bytes of C-source-like lines, a function of seed only. The
  // line lengths follow kCSourceLineLengths (corpus.cc).
  static Corpus Generate(uint64_t size, uint64_t seed);

  Corpus(Corpus&& other) noexcept;
  Corpus& operator=(Corpus&&) = delete;
  ~Corpus();

  const Line* head() const { return head_; }
  uint64_t lines() const { return lines_; }
  uint64_t bytes() const { return bytes_; }
  uint32_t longest() const { return longest_; }
  // The line after l, wrapping to the first: the output cycles the corpus.
  const Line* Next(const Line* l) const { return l->next ? l->next : head_; }

 private:
  Corpus() = default;
  void Append(const char* data, uint32_t len);
  Line* head_ = nullptr;
  Line* tail_ = nullptr;
  uint64_t lines_ = 0;
  uint64_t bytes_ = 0;
  uint32_t longest_ = 0;
};

// What one row writes: the corpus cycled line by line, `lines` lines.
struct OutputPlan {
  uint64_t lines = 0;
  uint64_t bytes = 0;
  double passes = 0;  // bytes / corpus bytes
};
// The fewest whole lines reaching at least total bytes; or exactly `passes`
// passes when passes > 0.
OutputPlan PlanOutput(const Corpus& corpus, uint64_t total, int passes);

// Reads path back and compares it byte for byte with what plan says was
// written. The error says where the first difference is.
Status VerifyOutput(const std::string& path, const Corpus& corpus, const OutputPlan& plan);

}  // namespace writelab
