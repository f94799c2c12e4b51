// SPDX-License-Identifier: MIT
#include "core/units.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <utility>

namespace writelab {
namespace {

// The leading run of digits and dots: "1.5GiB" → "1.5". Empty when text does
// not start with one, so signs, spaces, "nan" and "inf" never get further.
std::string_view NumberPart(std::string_view text) {
  size_t end = 0;
  while (end < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.'))
    ++end;
  return text.substr(0, end);
}

// The whole of number as a finite double ("1.5", ".5", "3."); false for "",
// ".", "1.2.3". Exponents cannot get here: NumberPart stops at 'e'.
bool ToDouble(std::string_view number, double& value) {
  auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), value,
                                   std::chars_format::fixed);
  return !number.empty() && ec == std::errc() && ptr == number.data() + number.size() &&
         std::isfinite(value);
}

template <typename Factor>
struct Suffix {
  std::string_view name;
  Factor factor;
};

template <typename Factor>
bool LookUp(std::string_view suffix, std::initializer_list<Suffix<Factor>> table, Factor& factor) {
  for (const Suffix<Factor>& s : table) {
    if (s.name == suffix) {
      factor = s.factor;
      return true;
    }
  }
  return false;
}

constexpr uint64_t kTiB = 1024 * kGiB;

}  // namespace

std::string Quoted(std::string_view text) {
  constexpr size_t kMax = 40;
  std::string out = "'";
  for (char c : text.substr(0, kMax)) out += std::iscntrl(static_cast<unsigned char>(c)) ? '?' : c;
  out += text.size() > kMax ? "...'" : "'";
  return out;
}

std::string SpaceJoined(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

std::string ListInWords(const std::vector<std::string>& items, const char* last) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i)
    out += (i == 0 ? "" : i + 1 == items.size() ? " " + std::string(last) + " " : ", ") + items[i];
  return out;
}

std::string Printable(std::string_view text, bool keep_newlines) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n' && keep_newlines) {
      out += '\n';
    } else if (c < 0x20 || c == 0x7f) {
      out += '?';
    } else if (c == 0xc2 && i + 1 < text.size() &&
               static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
      out += '?';  // a C1 control: CSI (U+009B) and OSC (U+009D) act on some terminals
      ++i;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::expected<uint64_t, std::string> ParseCount(std::string_view text, uint64_t max) {
  uint64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  bool digits = !text.empty() && std::isdigit(static_cast<unsigned char>(text[0])) &&
                ptr == text.data() + text.size();
  if (!digits) return std::unexpected(fmt::format("{} is not a whole number", Quoted(text)));
  if (ec == std::errc::result_out_of_range || value > max)
    return std::unexpected(fmt::format("{} is more than {}", Quoted(text), max));
  return value;
}

std::expected<uint64_t, std::string> ParseSize(std::string_view text) {
  auto bad = [&] { return std::unexpected(fmt::format("{} is not a size", Quoted(text))); };
  auto too_large = [&] { return std::unexpected(fmt::format("{} is too large", Quoted(text))); };
  std::string_view number = NumberPart(text);
  uint64_t factor = 0;
  if (number.empty() ||
      !LookUp<uint64_t>(text.substr(number.size()),
                        {{"", 1},       {"b", 1},      {"B", 1},      {"k", kKiB},  {"K", kKiB},
                         {"KB", kKiB},  {"kB", kKiB},  {"KiB", kKiB}, {"m", kMiB},  {"M", kMiB},
                         {"MB", kMiB},  {"MiB", kMiB}, {"g", kGiB},   {"G", kGiB},  {"GB", kGiB},
                         {"GiB", kGiB}, {"t", kTiB},   {"T", kTiB},   {"TB", kTiB}, {"TiB", kTiB}},
                        factor))
    return bad();
  if (number.find('.') == std::string_view::npos) {  // whole: exact, however large
    uint64_t value = 0;
    auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
    if (ec == std::errc::result_out_of_range) return too_large();
    if (ec != std::errc() || ptr != number.data() + number.size()) return bad();
    uint64_t bytes = 0;
    if (__builtin_mul_overflow(value, factor, &bytes)) return too_large();
    return bytes;
  }
  double value = 0;
  if (!ToDouble(number, value)) return bad();
  double bytes = value * static_cast<double>(factor);
  if (bytes >= 18446744073709551616.0) return too_large();
  if (bytes != std::floor(bytes))
    return std::unexpected(fmt::format("{} is not a whole number of bytes", Quoted(text)));
  return static_cast<uint64_t>(bytes);
}

std::expected<uint64_t, std::string> ParseDurationNs(std::string_view text) {
  auto bad = [&] { return std::unexpected(fmt::format("{} is not a duration", Quoted(text))); };
  std::string_view number = NumberPart(text);
  double factor = 0;
  if (number.empty() || !LookUp<double>(text.substr(number.size()),
                                        {{"", 1e9},
                                         {"s", 1e9},
                                         {"ms", 1e6},
                                         {"us", 1e3},
                                         {"ns", 1},
                                         {"m", 60e9},
                                         {"min", 60e9},
                                         {"h", 3600e9}},
                                        factor))
    return bad();
  double value = 0;
  if (!ToDouble(number, value)) {
    // Digits too many for a double are too long, not malformed.
    if (number.find_first_not_of("0123456789") == std::string_view::npos)
      return std::unexpected(fmt::format("{} is too long", Quoted(text)));
    return bad();
  }
  double ns = value * factor;
  if (!(ns < 9.2e18)) return std::unexpected(fmt::format("{} is too long", Quoted(text)));
  return static_cast<uint64_t>(std::llround(ns));
}

std::string FormatBytes(double bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (std::fabs(bytes) >= 1024 && unit < 4) {
    bytes /= 1024;
    ++unit;
  }
  if (unit == 0) return fmt::format("{:.0f} B", bytes);
  return fmt::format("{:.{}f} {}", bytes, bytes >= 100 ? 0 : bytes >= 10 ? 1 : 2, kUnits[unit]);
}

std::string FormatNs(double ns) {
  auto three = [](double v, const char* unit) {
    return fmt::format("{:.{}f} {}", v, v >= 100 ? 0 : v >= 10 ? 1 : 2, unit);
  };
  if (ns < 1e3) return fmt::format("{:.0f} ns", ns);
  if (ns < 1e6) return three(ns / 1e3, "us");
  if (ns < 1e9) return three(ns / 1e6, "ms");
  return three(ns / 1e9, "s");
}

std::string FormatValue(double v, const std::string& unit) {
  if (unit == "bytes") return FormatBytes(v);
  if (unit == "MB/s") return fmt::format("{:.0f} MB/s", v);
  if (unit == "s") return FormatNs(v * 1e9);
  if (unit == "ms") return FormatNs(v * 1e6);
  if (unit == "us") return FormatNs(v * 1e3);
  // Whole numbers print as such; the range check comes first, since the cast
  // of a value beyond int64_t (1e99 in a crafted result file) is undefined.
  if (std::isfinite(v) && std::fabs(v) < 9.0e18 && v == std::trunc(v))
    return fmt::format("{}", static_cast<int64_t>(v));
  // Past a thousand, three digits and an SI prefix (721k, not 7.21e+05).
  if (std::isfinite(v) && std::fabs(v) >= 1e3 && std::fabs(v) < 1e18) {
    static constexpr const char* kPrefixes[] = {"k", "M", "G", "T", "P", "E"};
    int at = -1;
    while (std::fabs(v) >= 1e3 && at < 5) v /= 1e3, ++at;
    const double a = std::fabs(v);
    return fmt::format("{:.{}f}{}", v, a >= 100 ? 0 : a >= 10 ? 1 : 2, kPrefixes[at]);
  }
  // Below a thousandth, three significant digits written out (0.0000302,
  // not 3.02e-05); below 1e-12, nothing a reader could use: 0.
  if (std::isfinite(v) && v != 0 && std::fabs(v) < 1e-3) {
    if (std::fabs(v) < 1e-12) return "0";
    const int decimals = 2 - static_cast<int>(std::floor(std::log10(std::fabs(v))));
    return fmt::format("{:.{}f}", v, decimals);
  }
  return fmt::format("{:.3g}", v);
}

}  // namespace writelab
