// SPDX-License-Identifier: MIT
#include "program/run/records.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>

#include "core/memory_room.h"
#include "shim/protocol.h"

namespace writelab {
namespace {

namespace proto = run_protocol;

std::optional<uint64_t> Number(std::string_view text) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return v;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// %XX-decoded, or nullopt when the encoding is broken or a byte should not
// have been encoded or is a NUL.
std::optional<std::string> DecodePath(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c != '%') {
      if (!proto::PathByteKept(static_cast<unsigned char>(c))) return std::nullopt;
      out += c;
      continue;
    }
    if (i + 2 >= text.size()) return std::nullopt;
    const int hi = HexDigit(text[i + 1]), lo = HexDigit(text[i + 2]);
    if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

}  // namespace

std::expected<ShimRecord, std::string> ParseShimRecord(std::string_view line) {
  if (line.size() > proto::kMaxRecord) return std::unexpected("longer than a record can be");
  std::vector<std::string_view> words;
  for (size_t at = 0; at <= line.size();) {
    size_t space = line.find(' ', at);
    if (space == std::string_view::npos) space = line.size();
    words.push_back(line.substr(at, space - at));
    at = space + 1;
  }
  if (words.size() < 2 || words[0] != proto::kMagic) return std::unexpected("not a shim record");
  ShimRecord r;
  const std::string_view type = words[1];
  if (type == "hello")
    r.type = ShimRecord::Type::kHello;
  else if (type == "claim")
    r.type = ShimRecord::Type::kClaim;
  else if (type == "done")
    r.type = ShimRecord::Type::kDone;
  else if (type == "unseen")
    r.type = ShimRecord::Type::kUnseen;
  else if (type == "leave")
    r.type = ShimRecord::Type::kLeave;
  else if (type == "handover")
    r.type = ShimRecord::Type::kHandover;
  else
    return std::unexpected("unknown record type");
  std::map<std::string_view, std::string_view> fields;
  for (size_t i = 2; i < words.size(); ++i) {
    const size_t eq = words[i].find('=');
    if (eq == std::string_view::npos || eq == 0) return std::unexpected("a field without '='");
    if (!fields.emplace(words[i].substr(0, eq), words[i].substr(eq + 1)).second)
      return std::unexpected("a field given twice");
  }
  using Type = ShimRecord::Type;
  if (r.type == Type::kLeave) {  // pid and reason, no more
    auto pid = fields.find("pid");
    auto v = pid == fields.end() ? std::nullopt : Number(pid->second);
    if (fields.size() != 2 || !v || *v == 0 || *v > 4194304)
      return std::unexpected("a leave record is pid and reason");
    auto reason = fields.find("reason");
    if (reason == fields.end() || reason->second != "seccomp")
      return std::unexpected("'reason' is not one the shim says");
    r.pid = static_cast<pid_t>(*v);
    r.mech = reason->second;
    return r;
  }
  // hello: pid; claim, unseen and handover: pid, dev, ino; done: all five.
  static constexpr std::string_view kNumbers[] = {"pid", "dev", "ino", "written", "handled"};
  const size_t numbers = r.type == Type::kHello ? 1 : r.type == Type::kDone ? 5 : 3;
  const std::string_view text_field = r.type == Type::kHello ? "exe" : "path";
  const bool paced = r.type == Type::kDone && fields.contains("flushes");
  const size_t expected = numbers + 1 + (r.type == Type::kDone ? 1 : 0) + (paced ? 3 : 0);
  if (fields.size() != expected) return std::unexpected("the fields of its type, no more, no less");
  for (size_t k = 0; k < numbers; ++k) {
    const std::string_view key = kNumbers[k];
    auto it = fields.find(key);
    auto v = it == fields.end() ? std::nullopt : Number(it->second);
    if (!v) return std::unexpected("'" + std::string(key) + "' must be a number");
    if (key == "pid") {
      if (*v == 0 || *v > 4194304) return std::unexpected("'pid' out of range");
      r.pid = static_cast<pid_t>(*v);
    } else if (key == "dev") {
      r.dev = *v;
    } else if (key == "ino") {
      r.ino = *v;
    } else if (key == "written") {
      r.written = *v;
    } else {
      r.handled = *v;
    }
  }
  auto path = fields.find(text_field);
  auto decoded = path == fields.end() ? std::nullopt : DecodePath(path->second);
  if (!decoded) return std::unexpected("'" + std::string(text_field) + "' is not an encoded path");
  r.path = *decoded;
  if (r.type == Type::kDone) {
    auto mech = fields.find("mech");
    static constexpr std::string_view kMechs[] = {"window",
                                                  "window-drop",
                                                  "dontcache",
                                                  "drop-behind",
                                                  "paced",
                                                  "dontcache+window-drop",
                                                  "refused-dontcache",
                                                  "small",
                                                  "plain",
                                                  "failed",
                                                  "no-wait",
                                                  "direct",
                                                  "direct+window-drop",
                                                  "refused-direct-unaligned",
                                                  "refused-direct-open",
                                                  "refused-direct-append"};
    bool known = false;
    for (std::string_view m : kMechs) known |= mech != fields.end() && mech->second == m;
    if (!known) return std::unexpected("'mech' is not one the shim says");
    r.mech = mech->second;
  }
  if (paced) {
    auto value = [&](std::string_view key) {
      auto it = fields.find(key);
      return it == fields.end() ? std::nullopt : Number(it->second);
    };
    auto flushes = value("flushes"), unmet = value("unmet"), slowest = value("slowest");
    if (!flushes || !unmet || !slowest)
      return std::unexpected("'flushes', 'unmet' and 'slowest' must be numbers");
    if (*unmet > *flushes) return std::unexpected("more 'unmet' flushes than flushes");
    if (r.mech == "small" || r.mech == "plain")
      return std::unexpected("paced's counts on a file the shim did not handle");
    r.paced = ShimRecord::Paced{*flushes, *unmet, *slowest};
  }
  return r;
}

void ShimRecordReader::Feed(std::string_view bytes, std::vector<ShimRecord>& records,
                            std::vector<std::string>& errors) {
  for (char c : bytes) {
    if (c != '\n') {
      if (skipping_) continue;
      if (partial_.size() >= proto::kMaxRecord) {
        errors.push_back("a line longer than a record can be");
        partial_.clear();
        skipping_ = true;
        continue;
      }
      partial_ += c;
      continue;
    }
    if (!skipping_) {
      if (auto r = ParseShimRecord(partial_))
        records.push_back(std::move(*r));
      else
        errors.push_back(r.error());
    }
    partial_.clear();
    skipping_ = false;
  }
}

void ShimRecord::Paced::Add(const Paced& r) {
  flushes = SaturatingAdd(flushes, r.flushes);
  unmet = SaturatingAdd(unmet, r.unmet);
  slowest_ns = std::max(slowest_ns, r.slowest_ns);
}

}  // namespace writelab
