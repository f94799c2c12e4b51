// SPDX-License-Identifier: MIT
// Sizes and durations as people type them, and as writelab prints them.
//
// Sizes: a non-negative number with an optional binary suffix. "4096", "4k",
// "8M", "1G", "4KiB", "1.5GiB", "2T" (k, K, KB, KiB all mean 1024; no decimal
// multiples: storage people type 4k and mean 4096). Fractions are allowed
// when the result is a whole number of bytes.
// Durations: a number and a unit: "500ms", "3s", "2m", "1h", "250us",
// "100ns"; a bare number is seconds.
#pragma once

#include <cstdint>
#include <expected>
#include <string>
#include <string_view>
#include <vector>

namespace writelab {

// On failure the error text is "'12q' is not a size" (the caller prefixes the
// option name). Sizes must fit in 64 bits and durations in int64 nanoseconds
// (about 292 years): anything larger is refused as "too large"/"too long",
// never wrapped. Signs, exponents, hex, "nan", "inf" and spaces are refused.
std::expected<uint64_t, std::string> ParseSize(std::string_view text);
std::expected<uint64_t, std::string> ParseDurationNs(std::string_view text);

// A whole number in decimal digits only: no sign, no spaces, no 0x, no
// fraction; at most max. Errors: "'-1' is not a whole number",
// "'99999999999999999999' is more than 4096".
std::expected<uint64_t, std::string> ParseCount(std::string_view text, uint64_t max = UINT64_MAX);

// text quoted for an error message: at most 40 characters ("..." after),
// control characters as '?', so that the message stays one short line.
std::string Quoted(std::string_view text);

// text with every control character as '?': C0 (newlines too, unless
// keep_newlines), DEL, and the C1 controls U+0080..U+009F in UTF-8. The one
// sanitiser for what reaches a terminal or a CSV: strings of a document
// read (report/json_read.cc), and the text, compare and CSV output and
// error lines as a whole, so that a row named "\x1b]0;x\x07\r\x1b[2K" cannot
// retitle the terminal or rewrite a line.
std::string Printable(std::string_view text, bool keep_newlines = false);

// "dd if=x of=y": words joined by single spaces (a command line).
std::string SpaceJoined(const std::vector<std::string>& words);

// "a", "a and b", "a, b and c" (or with another last word: "a, b or c").
std::string ListInWords(const std::vector<std::string>& items, const char* last = "and");

// "8 MiB", "1.50 GiB", "512 B": binary units, for sizes.
std::string FormatBytes(double bytes);
// "812 ns", "3.41 us", "12.0 ms", "1.52 s": for latencies.
std::string FormatNs(double ns);

// "812", "1.52 GiB", "3.41 ms": a value in a figure's unit, for tables.
std::string FormatValue(double value, const std::string& unit);

constexpr double kMB = 1e6;  // throughput figures are in MB/s (10^6 bytes/s), as dd and fio print
constexpr uint64_t kKiB = 1024;
constexpr uint64_t kMiB = 1024 * kKiB;
constexpr uint64_t kGiB = 1024 * kMiB;

}  // namespace writelab
