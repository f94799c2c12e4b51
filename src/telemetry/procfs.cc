// SPDX-License-Identifier: MIT
#include "telemetry/procfs.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace writelab {
namespace {

// Value in kB of "Key:   123 kB" inside meminfo text, in bytes.
std::optional<uint64_t> MeminfoField(std::string_view text, std::string_view key) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(pos, eol - pos);
    pos = eol + 1;
    if (line.size() <= key.size() || line.substr(0, key.size()) != key || line[key.size()] != ':')
      continue;
    size_t i = key.size() + 1;
    while (i < line.size() && line[i] == ' ') ++i;
    uint64_t kb = 0;
    auto [ptr, ec] = std::from_chars(line.data() + i, line.data() + line.size(), kb);
    if (ec != std::errc()) return std::nullopt;
    return kb * 1024;
  }
  return std::nullopt;
}

std::optional<std::string_view> PreadAll(int fd, char* buf, size_t size) {
  if (fd < 0) return std::nullopt;
  ssize_t n = pread(fd, buf, size - 1, 0);
  if (n <= 0) return std::nullopt;
  return std::string_view(buf, static_cast<size_t>(n));
}

}  // namespace

std::optional<MemSample> ParseMeminfo(std::string_view text) {
  auto dirty = MeminfoField(text, "Dirty");
  auto writeback = MeminfoField(text, "Writeback");
  auto cached = MeminfoField(text, "Cached");
  auto total = MeminfoField(text, "MemTotal");
  if (!dirty || !writeback || !cached || !total) return std::nullopt;
  return MemSample{*dirty, *writeback, *cached, *total,
                   MeminfoField(text, "MemAvailable").value_or(0)};
}

std::optional<BlockSample> ParseBlockStat(std::string_view text) {
  uint64_t f[11] = {};
  const char* p = text.data();
  const char* end = text.data() + text.size();
  for (uint64_t& v : f) {
    while (p < end && (*p == ' ' || *p == '\t')) ++p;
    auto [next, ec] = std::from_chars(p, end, v);
    if (ec != std::errc()) return std::nullopt;
    p = next;
  }
  // Fields 5-9 (1-based): write I/Os, write merges, write sectors, write ticks, in_flight.
  return BlockSample{f[4], f[5], f[6], f[7], f[8]};
}

std::optional<std::string> ReadSmallFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::optional<std::string> ReadLine(const std::string& path) {
  auto text = ReadSmallFile(path);
  if (!text) return std::nullopt;
  std::string line = text->substr(0, text->find('\n'));
  while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
  return line;
}

std::optional<DescriptorView> ViewDescriptor(const std::string& link) {
  DescriptorView v{UniqueFd(::open(link.c_str(), O_PATH | O_CLOEXEC)), {}, {}};
  if (!v.handle || fstat(v.handle.get(), &v.st) != 0) return std::nullopt;
  char path[4096];
  const std::string self = "/proc/self/fd/" + std::to_string(v.handle.get());
  const ssize_t n = readlink(self.c_str(), path, sizeof path);
  if (n <= 0 || static_cast<size_t>(n) >= sizeof path) return std::nullopt;
  v.path.assign(path, static_cast<size_t>(n));
  return v;
}

MeminfoReader::MeminfoReader() : fd_(::open("/proc/meminfo", O_RDONLY | O_CLOEXEC)) {}

std::optional<MemSample> MeminfoReader::Read() {
  char buf[8192];
  auto text = PreadAll(fd_.get(), buf, sizeof buf);
  return text ? ParseMeminfo(*text) : std::nullopt;
}

BlockStatReader::BlockStatReader(const std::string& device) {
  if (!device.empty())
    fd_.Reset(::open(("/sys/block/" + device + "/stat").c_str(), O_RDONLY | O_CLOEXEC));
}

std::optional<BlockSample> BlockStatReader::Read() {
  char buf[512];
  auto text = PreadAll(fd_.get(), buf, sizeof buf);
  return text ? ParseBlockStat(*text) : std::nullopt;
}

std::vector<pid_t> Descendants(pid_t root) {
  std::map<pid_t, pid_t> parent;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    auto stat = ReadSmallFile("/proc/" + name + "/stat");
    if (!stat) continue;
    const size_t close = stat->rfind(')');
    if (close == std::string::npos) continue;
    int ppid = 0;
    char state = 0;
    if (std::sscanf(stat->c_str() + close + 1, " %c %d", &state, &ppid) == 2)
      parent[std::stoi(name)] = ppid;
  }
  std::vector<pid_t> out = {root};
  for (size_t i = 0; i < out.size(); ++i)
    for (const auto& [pid, pp] : parent)
      if (pp == out[i] && std::find(out.begin(), out.end(), pid) == out.end()) out.push_back(pid);
  return out;
}

}  // namespace writelab
