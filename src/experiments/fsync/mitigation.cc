// SPDX-License-Identifier: MIT
#include "experiments/fsync/mitigation.h"

#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <sstream>

#include "core/units.h"
#include "telemetry/procfs.h"
#include "testbed/cgroup.h"
#include "testbed/dirty_limit.h"

namespace writelab {
namespace {

bool NameOk(const std::string& s) {
  if (s.empty() || s.size() > 32) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') return false;
  return true;
}

std::expected<Mitigation, std::string> ParseCgroup(Mitigation m, const std::string& spec) {
  const size_t colon = spec.find(':');
  const std::string file = spec.substr(0, colon),
                    arg = colon == std::string::npos ? "" : spec.substr(colon + 1);
  m.kind = MitigationKind::kCgroup;
  m.cgroup_file = file;
  if (file == "io.latency") {
    auto ns = ParseDurationNs(arg);
    if (!ns || *ns < 1000)
      return std::unexpected("io.latency takes a target, e.g. io.latency:10ms");
    m.cgroup_value = "target=" + std::to_string(*ns / 1000);
    return m;
  }
  if (file == "io.max") {  // one limit: rbps=SIZE, wbps=SIZE, riops=N or wiops=N
    const size_t eq = arg.find('=');
    const std::string key = arg.substr(0, eq),
                      value = eq == std::string::npos ? "" : arg.substr(eq + 1);
    if (key != "rbps" && key != "wbps" && key != "riops" && key != "wiops")
      return std::unexpected(
          "io.max takes one of rbps=, wbps=, riops=, wiops=, e.g. io.max:wbps=100M");
    auto v = key.ends_with("bps") ? ParseSize(value) : ParseCount(value);
    if (!v || *v == 0) return std::unexpected("io.max: '" + value + "' is not a positive amount");
    m.cgroup_value = key + "=" + std::to_string(*v);
    return m;
  }
  return std::unexpected("cgroup= takes io.latency:TARGET or io.max:LIMIT");
}

}  // namespace

std::expected<Mitigation, std::string> ParseMitigation(const std::string& text) {
  Mitigation m;
  m.name = text;
  if (text == "none") return m;
  const size_t eq = text.find('=');
  const std::string key = text.substr(0, eq),
                    value = eq == std::string::npos ? "" : text.substr(eq + 1);
  auto bad = [&](const std::string& why) {
    return std::unexpected("--mitigation: '" + text + "': " + why);
  };
  if (key == "wbt") {
    m.kind = MitigationKind::kWbt;
    if (value == "off") return m;
    auto ns = ParseDurationNs(value);
    if (!ns || *ns < 1000 || *ns > 10'000'000'000)
      return bad("wbt= takes off or a latency target from 1us to 10s, e.g. wbt=2ms");
    m.wbt_usec = *ns / 1000;
    return m;
  }
  if (key == "bdi") {
    m.kind = MitigationKind::kBdi;
    auto bytes = ParseSize(value);
    const uint64_t memory = static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) *
                            static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    if (!bytes || *bytes < (1u << 20) || *bytes > memory)
      return bad("bdi= takes a size from 1 MiB to this machine's memory (" +
                 FormatBytes(static_cast<double>(memory)) + "), e.g. bdi=256M");
    m.bdi_bytes = *bytes;
    return m;
  }
  if (key == "bg") {
    m.kind = MitigationKind::kBackground;
    if (value == "dontcache")
      m.style = StreamStyle::kDontcache;
    else if (value == "window-drop")
      m.style = StreamStyle::kWindowDrop;
    else
      return bad("bg= takes dontcache or window-drop (the stream experiment's strategies)");
    return m;
  }
  if (key == "scheduler") {
    m.kind = MitigationKind::kScheduler;
    if (!NameOk(value)) return bad("scheduler= takes a scheduler's name, e.g. scheduler=bfq");
    m.scheduler = value;
    return m;
  }
  if (key == "cgroup") {
    auto c = ParseCgroup(m, value);
    if (!c) return bad(c.error());
    return c;
  }
  return bad(
      "expected none, wbt=off|DURATION, bdi=SIZE, bg=dontcache|window-drop, "
      "scheduler=NAME or cgroup=io.latency:TARGET|io.max:LIMIT");
}

namespace {

using Refused = std::unexpected<MitigationRefusal>;

Refused Unsupported(int code, const std::string& why) {
  return Refused(MitigationRefusal{true, ErrnoError(code, why)});
}
Refused Failed(const Error& e) { return Refused(MitigationRefusal{false, e}); }

// The background's cgroup, under writelab's own, with the io controller
// (and memory, where offered, so that its buffered writeback is charged to
// it) and the mitigation's setting for the device (testbed/cgroup.h).
std::expected<AppliedMitigation, MitigationRefusal> ApplyCgroup(const Mitigation& m,
                                                                const std::string& device,
                                                                UndoJournal* journal) {
  auto place = FindCgroupPlace();
  if (!place) return Refused(MitigationRefusal{true, place.error()});
  const std::string offered = ReadLine(place->root + "/cgroup.controllers").value_or("");
  if (!ListsController(offered, "io"))
    return Unsupported(
        ENOENT, "no cgroup v2 io controller: cgroup v2 at " + place->root + " offers '" + offered +
                    "' (the io controller is bound to cgroup v1's blkio, or absent)");
  const std::string own_offers = ReadLine(place->dir() + "/cgroup.controllers").value_or("");
  if (!ListsController(own_offers, "io"))
    return Unsupported(ENOENT, "cgroup v2 at " + place->root +
                                   " has the io controller, but writelab's cgroup " + place->own +
                                   " is not offered it (its parent does not enable io below it)");
  if (device.empty()) return Unsupported(ENOENT, "no block device under the target");
  if (!journal) return Failed(PlainError(m.name + ": needs root (it makes a cgroup)"));
  auto disk = ReadLine("/sys/block/" + device + "/dev");  // "253:0"
  if (!disk) return Unsupported(ENOENT, "no /sys/block/" + device + "/dev");
  const bool memory = ListsController(own_offers, "memory");
  auto made = memory ? OwnCgroup::Make(*place, {"io", "memory"}, *journal)
                     : OwnCgroup::Make(*place, {"io"}, *journal);
  if (!made && made.error().code == EBUSY)
    return Unsupported(EBUSY, "cgroup v2 refused to enable io below writelab's cgroup " +
                                  place->own +
                                  ": it holds processes, writelab among them, and cgroup v2 "
                                  "enables controllers only below a cgroup without processes "
                                  "of its own (the root excepted); see docs/fsync.md");
  if (!made) return Failed(made.error());
  auto set = (*made)->Set(m.cgroup_file, *disk + " " + m.cgroup_value);
  if (!set && set.error().code == ENOENT)
    return Unsupported(ENOENT, "the kernel has no " + m.cgroup_file + " file (" +
                                   (m.cgroup_file == "io.latency" ? "CONFIG_BLK_CGROUP_IOLATENCY"
                                                                  : "CONFIG_BLK_DEV_THROTTLING") +
                                   ")");
  if (!set) return Failed(set.error());
  AppliedMitigation a;
  a.notes.push_back("the background runs in the cgroup " + (*made)->path() + ", its " +
                    m.cgroup_file + " reading '" + *set + "'");
  if (!memory)
    a.notes.push_back(
        "the memory controller is not offered: the kernel charges buffered writeback to a "
        "cgroup only with io and memory both on (cgroup writeback), so " +
        m.cgroup_file + " applies only to what the background writes itself");
  a.cgroup = std::move(*made);
  return a;
}

std::expected<AppliedMitigation, MitigationRefusal> ApplyScheduler(const Mitigation& m,
                                                                   const std::string& device,
                                                                   UndoJournal& journal) {
  const std::string queue = "/sys/block/" + device + "/queue/";
  const std::string offered = ReadLine(queue + "scheduler").value_or("");
  std::istringstream words(offered);
  bool found = false;
  for (std::string w; words >> w;) found |= w == m.scheduler || w == "[" + m.scheduler + "]";
  if (!found)
    return Unsupported(
        EINVAL, device + " offers no scheduler " + m.scheduler + " (it offers: " + offered + ")");
  auto change = SetSysfs(journal, queue + "scheduler", m.scheduler);
  if (!change) return Failed(change.error());
  AppliedMitigation a;
  a.changes.push_back(std::move(*change));
  if (auto wbt = ReadLine(queue + "wbt_lat_usec"))
    a.notes.push_back(SchedulerWbtNote(m.scheduler, *wbt));
  return a;
}

std::expected<AppliedMitigation, MitigationRefusal> ApplyWbt(const Mitigation& m,
                                                             const std::string& device,
                                                             UndoJournal& journal) {
  const std::string knob = "/sys/block/" + device + "/queue/wbt_lat_usec";
  auto before = ReadLine(knob);
  if (!before)
    return Unsupported(ENOENT, device +
                                   " has no queue/wbt_lat_usec (a kernel without "
                                   "CONFIG_BLK_WBT, or a device without a request queue)");
  auto change = SetSysfs(journal, knob, std::to_string(m.wbt_usec));
  if (!change) return Failed(change.error());
  AppliedMitigation a;
  a.changes.push_back(std::move(*change));
  a.notes.push_back("wbt_lat_usec " + ReadLine(knob).value_or("?") + " (was " + *before + ")");
  return a;
}

}  // namespace

std::string SchedulerWbtNote(const std::string& scheduler, const std::string& wbt_lat_usec) {
  std::string note = "under " + scheduler + ", wbt_lat_usec reads " + wbt_lat_usec;
  if (wbt_lat_usec == "0")
    note += scheduler == "bfq" ? " (bfq turns writeback throttling off)"
                               : " (writeback throttling is off)";
  return note;
}

std::expected<AppliedMitigation, MitigationRefusal> ApplyMitigation(const Mitigation& m,
                                                                    const std::string& device,
                                                                    UndoJournal* journal) {
  if (m.kind == MitigationKind::kNone || m.kind == MitigationKind::kBackground)
    return AppliedMitigation{};  // bg=: the caller starts the background with its style
  if (m.kind == MitigationKind::kCgroup) return ApplyCgroup(m, device, journal);
  if (device.empty()) return Unsupported(ENOENT, "no block device under the target");
  if (!journal) return Failed(PlainError(m.name + ": needs root (it changes " + device + ")"));
  switch (m.kind) {
    case MitigationKind::kWbt:
      return ApplyWbt(m, device, *journal);
    case MitigationKind::kScheduler:
      return ApplyScheduler(m, device, *journal);
    case MitigationKind::kBdi: {
      if (access(("/sys/block/" + device + "/bdi/max_bytes").c_str(), F_OK) != 0)
        return Unsupported(ENOENT, "the kernel has no bdi max_bytes (Linux 6.2)");
      AppliedMitigation a;
      if (Status s = LimitDeviceDirty(device, m.bdi_bytes, *journal, a.changes); !s)
        return Failed(s.error());
      a.notes.push_back(device + "'s dirty pages limited to " +
                        FormatBytes(static_cast<double>(m.bdi_bytes)) +
                        " (bdi max_bytes, strict_limit)");
      return a;
    }
    default:
      return AppliedMitigation{};
  }
}

}  // namespace writelab
