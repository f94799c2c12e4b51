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

// Splits "1.5GiB" into 1.5 and "GiB". Rejects signs, exponents and empties.
bool SplitNumber(std::string_view text, double& value, std::string_view& suffix) {
  if (text.empty() || !(std::isdigit(static_cast<unsigned char>(text[0])) || text[0] == '.'))
    return false;
  size_t end = 0;
  while (end < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.'))
    ++end;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + end, value);
  if (ec != std::errc() || ptr != text.data() + end) return false;
  suffix = text.substr(end);
  return std::isfinite(value);
}

struct Suffix {
  std::string_view name;
  double factor;
};

bool LookUp(std::string_view suffix, std::initializer_list<Suffix> table, double& factor) {
  for (const Suffix& s : table) {
    if (s.name == suffix) {
      factor = s.factor;
      return true;
    }
  }
  return false;
}

}  // namespace

std::expected<uint64_t, std::string> ParseSize(std::string_view text) {
  auto bad = [&] { return std::unexpected(fmt::format("'{}' is not a size", text)); };
  double value = 0;
  std::string_view suffix;
  if (!SplitNumber(text, value, suffix)) return bad();
  constexpr double k = 1024.0;
  double factor = 0;
  if (!LookUp(suffix,
              {{"", 1},
               {"b", 1},
               {"B", 1},
               {"k", k},
               {"K", k},
               {"KB", k},
               {"kB", k},
               {"KiB", k},
               {"m", k * k},
               {"M", k * k},
               {"MB", k * k},
               {"MiB", k * k},
               {"g", k * k * k},
               {"G", k * k * k},
               {"GB", k * k * k},
               {"GiB", k * k * k},
               {"t", k * k * k * k},
               {"T", k * k * k * k},
               {"TB", k * k * k * k},
               {"TiB", k * k * k * k}},
              factor))
    return bad();
  double bytes = value * factor;
  if (bytes >= 18446744073709551616.0)
    return std::unexpected(fmt::format("'{}' is too large", text));
  if (bytes != std::floor(bytes))
    return std::unexpected(fmt::format("'{}' is not a whole number of bytes", text));
  return static_cast<uint64_t>(bytes);
}

std::expected<uint64_t, std::string> ParseDurationNs(std::string_view text) {
  auto bad = [&] { return std::unexpected(fmt::format("'{}' is not a duration", text)); };
  double value = 0;
  std::string_view suffix;
  if (!SplitNumber(text, value, suffix)) return bad();
  double factor = 0;
  if (!LookUp(suffix,
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
  double ns = value * factor;
  if (ns >= 9.2e18) return std::unexpected(fmt::format("'{}' is too long", text));
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

}  // namespace writelab
