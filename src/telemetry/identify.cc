// SPDX-License-Identifier: MIT
#include "telemetry/identify.h"

#include <libmount/libmount.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include "telemetry/procfs.h"
#include "telemetry/sysfs_block.h"

namespace writelab {
namespace {

namespace fs = std::filesystem;

std::optional<uint64_t> ReadNumber(const std::string& path) {
  auto line = ReadLine(path);
  if (!line || line->empty()) return std::nullopt;
  try {
    return std::stoull(*line);
  } catch (...) {
    return std::nullopt;
  }
}

// The first "model name" of /proc/cpuinfo (x86; other architectures name
// their CPUs otherwise and get "").
std::string CpuModel() {
  auto text = ReadSmallFile("/proc/cpuinfo");
  if (!text) return "";
  const std::string key = "model name";
  for (size_t at = 0; at < text->size();) {
    size_t end = text->find('\n', at);
    if (end == std::string::npos) end = text->size();
    std::string_view line(text->data() + at, end - at);
    at = end + 1;
    if (!line.starts_with(key)) continue;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    line.remove_prefix(colon + 1);
    while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    return std::string(line);
  }
  return "";
}

void FillMount(const std::string& path, Target& t) {
  libmnt_table* table = mnt_new_table_from_file("/proc/self/mountinfo");
  if (!table) return;
  std::unique_ptr<libmnt_table, void (*)(libmnt_table*)> guard(table, mnt_unref_table);
  libmnt_fs* fs = mnt_table_find_mountpoint(table, path.c_str(), MNT_ITER_BACKWARD);
  if (!fs) return;
  auto str = [](const char* s) { return s ? std::string(s) : std::string(); };
  t.fs_type = str(mnt_fs_get_fstype(fs));
  t.mount_point = str(mnt_fs_get_target(fs));
  t.mount_source = str(mnt_fs_get_source(fs));
  t.mount_options = str(mnt_fs_get_options(fs));
}

// Follows partitions to their disk and device-mapper devices to what lies
// under them, recording each step in t.stack. Returns the device whose queue
// does the I/O.
std::string ResolveDevice(std::string name, Target& t) {
  for (int depth = 0; depth < 8 && !name.empty(); ++depth) {
    std::error_code ec;
    fs::path dir = fs::canonical("/sys/class/block/" + name, ec);
    if (ec) return name;
    if (fs::exists(dir / "partition")) {
      std::string disk = dir.parent_path().filename().string();
      t.stack.push_back(name + " (partition of " + disk + ")");
      name = disk;
      continue;
    }
    if (fs::exists(dir / "dm")) {
      std::string lower;
      for (const auto& e : fs::directory_iterator(dir / "slaves", ec)) {
        lower = e.path().filename().string();
        break;
      }
      auto dm_name = ReadLine((dir / "dm" / "name").string()).value_or("");
      t.stack.push_back(name + " (device-mapper " + dm_name + " over " + lower + ")");
      if (lower.empty()) return name;
      name = lower;
      continue;
    }
    if (auto backing = ReadLine((dir / "loop" / "backing_file").string())) {
      auto dio = ReadLine((dir / "loop" / "dio").string()).value_or("?");
      t.stack.push_back(name + " (loop over " + *backing + ", direct I/O " + dio + ")");
    } else {
      t.stack.push_back(name);
    }
    return name;
  }
  return name;
}

void FillQueue(const std::string& dev, Target& t) {
  std::string q = "/sys/block/" + dev + "/queue/";
  t.model = ReadLine("/sys/block/" + dev + "/device/model").value_or("");
  // NVMe says firmware_rev, SCSI and ATA (through libata) say rev.
  for (const char* name : {"firmware_rev", "rev"})
    if (t.firmware.empty())
      t.firmware = ReadLine("/sys/block/" + dev + "/device/" + name).value_or("");
  if (auto sched = ReadLine(q + "scheduler")) {
    size_t pos = 0;
    while (pos < sched->size()) {
      size_t end = sched->find(' ', pos);
      if (end == std::string::npos) end = sched->size();
      std::string word = sched->substr(pos, end - pos);
      if (!word.empty() && word.front() == '[') {
        word = word.substr(1, word.size() - 2);
        t.scheduler = word;
      }
      if (!word.empty()) t.schedulers.push_back(word);
      pos = end + 1;
    }
  }
  if (auto rot = ReadNumber(q + "rotational")) t.rotational = *rot != 0;
  t.logical_block_size = ReadNumber(q + "logical_block_size");
  t.physical_block_size = ReadNumber(q + "physical_block_size");
  t.max_sectors_kb = ReadNumber(q + "max_sectors_kb");
  t.write_zeroes_max_bytes = ReadNumber(q + "write_zeroes_max_bytes");
  t.write_zeroes_unmap_max_bytes = ReadNumber(q + "write_zeroes_unmap_max_bytes");
}

}  // namespace

Host IdentifyHost() {
  Host h;
  utsname u;
  if (uname(&u) == 0) {
    h.hostname = u.nodename;
    h.kernel = u.release;
    h.version = u.version;
    h.machine = u.machine;
  }
  h.cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  h.cpu_model = CpuModel();
  if (auto text = ReadSmallFile("/proc/meminfo"))
    if (auto m = ParseMeminfo(*text)) h.memory_bytes = m->total;
  for (const char* knob :
       {"dirty_ratio", "dirty_background_ratio", "dirty_bytes", "dirty_background_bytes",
        "dirty_expire_centisecs", "dirty_writeback_centisecs"}) {
    if (auto v = ReadNumber(std::string("/proc/sys/vm/") + knob))
      h.vm[knob] = static_cast<int64_t>(*v);
  }
  return h;
}

Target IdentifyTarget(const std::string& path) {
  Target t;
  char resolved[PATH_MAX];
  t.path = realpath(path.c_str(), resolved) ? resolved : path;
  struct stat st;
  std::string name;
  if (stat(t.path.c_str(), &st) == 0 && S_ISBLK(st.st_mode)) {
    // A raw device: no file system; the device itself is the target.
    t.fs_type = "none (raw device)";
    name = SysfsBlockName(st.st_rdev);
  } else {
    FillMount(t.path, t);
    if (stat(t.path.c_str(), &st) == 0 && major(st.st_dev) != 0) name = SysfsBlockName(st.st_dev);
  }
  // btrfs and others report an anonymous st_dev: ask the mount source instead.
  if (name.empty() && t.mount_source.starts_with("/dev/") &&
      stat(t.mount_source.c_str(), &st) == 0 && S_ISBLK(st.st_mode))
    name = SysfsBlockName(st.st_rdev);
  if (name.empty()) return t;
  t.device = ResolveDevice(name, t);
  FillQueue(t.device, t);
  return t;
}

std::optional<std::string> CheckDirectSize(const char* option, uint64_t bytes, const Target& t,
                                           uint64_t at_least) {
  const std::string& path = t.path;
  const uint64_t logical = t.logical_block_size.value_or(512);
  const uint64_t need = std::max(logical, at_least);
  if (bytes != 0 && bytes % need == 0) return std::nullopt;
  std::string why = need == logical
                        ? ", the logical block size of " + (t.device.empty() ? path : t.device)
                        : " bytes, the alignment writelab uses";
  return std::string(option) + ": " + std::to_string(bytes) + " bytes is not a multiple of " +
         std::to_string(need) + why + " (O_DIRECT needs one)";
}

}  // namespace writelab
