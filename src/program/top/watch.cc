// SPDX-License-Identifier: MIT
// `writelab top`: loads the tracer with every process in scope (but
// writelab's own) and every mounted file system on a disk watched, then
// closes an interval every --interval until the duration ends or Ctrl-C,
// drawing the screen on a terminal; at the end, the document.
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <sstream>

#include "core/clock.h"
#include "explain/kernel_dev.h"
#include "explain/wait_functions.h"
#include "program/explain/live_table.h"
#include "program/top/def.h"
#include "program/top/results.h"
#include "program/top/screen.h"
#include "telemetry/procfs.h"
#include "telemetry/sysfs_block.h"

namespace writelab {
namespace {

// The mounted file systems on a block device, each with its disk: from
// /proc/self/mountinfo's third field (MAJ:MIN), where sysfs knows it.
std::vector<WatchedFs> MountedDiskFileSystems() {
  std::vector<WatchedFs> out;
  std::set<dev_t> seen;
  std::ifstream in("/proc/self/mountinfo");
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    std::string id, parent, majmin;
    unsigned maj = 0, min = 0;
    if (!(f >> id >> parent >> majmin) || std::sscanf(majmin.c_str(), "%u:%u", &maj, &min) != 2)
      continue;
    const dev_t dev = makedev(maj, min);
    if (maj == 0 || !seen.insert(dev).second || SysfsBlockDir(dev).empty()) continue;
    out.push_back({dev, DiskOf(dev)});
    if (out.size() == 64) break;  // the tracer's maps hold 64
  }
  return out;
}

std::string CommFromProc(uint32_t tgid) {
  std::ifstream in("/proc/" + std::to_string(tgid) + "/comm");
  std::string name;
  std::getline(in, name);
  return name;
}

// What the tracer could not see or count, for the notes.
std::vector<std::string> TopNotes(const Tracer& tracer, const TopTally& tally) {
  std::vector<std::string> notes;
  for (int p = 0; p < kTraceParts; ++p)
    if (std::string why = tracer.Missing(static_cast<TracePart>(p)); !why.empty())
      notes.push_back(std::string(TracePartName(static_cast<TracePart>(p))) +
                      " not measured: " + why);
  const trace_totals t = tracer.Totals();
  auto lost = [&](uint64_t n, const std::string& what) {
    if (n) notes.push_back(std::to_string(n) + " " + what);
  };
  lost(t.lost_calls, "calls not timed: the map of calls in flight was full");
  lost(t.lost_events, "records lost: the ring buffer was full (calls, charged windows)");
  lost(tally.windows_dropped(), "windows of charged writes not kept: some culprits not named");
  if (t.charges_lost)
    notes.push_back(std::to_string(t.charges_lost / 1000000) +
                    " MB written charged to no one: too many disks and file systems written (" +
                    std::to_string(TRACE_BLAME_GROUPS) + " windows at most)");
  if (t.unbalanced)
    notes.push_back(std::to_string(t.unbalanced) + " calls' parts did not add up (a bug)");
  if (tracer.WaitFunctionsFound() == 0) notes.push_back(kNoWaitFunctions);
  for (std::string& n : SplitCheckNotes(tracer.Check())) notes.push_back(std::move(n));
  notes.push_back(
      "what is not seen: calls shorter than 1 ms that are not durability calls (a write is "
      "throttled for at least one jiffy, so none of its throttling is missed), writes through "
      "mmap, file systems mounted after top started until a process calls write on them, "
      "network file systems");
  return notes;
}

}  // namespace

Status RunTop(const TopSpec& spec, const RunContext& ctx, Document& doc) {
  const uint64_t start = NowNs();
  TopTally tally(start, CommFromProc);
  const std::vector<WatchedFs> fss = MountedDiskFileSystems();
  std::set<uint32_t> known;
  for (const WatchedFs& w : fss) {
    tally.SetDisk(KernelDev(w.fs), KernelDev(w.disk));
    known.insert(KernelDev(w.fs));
  }
  TraceSink sink;
  sink.call = [&](const TraceCall& c) {
    if (c.dev && known.insert(c.dev).second)
      tally.SetDisk(c.dev, KernelDev(DiskOf(UserDev(c.dev))));
    tally.AddCall(c);
  };
  sink.charges = [&](const TraceCharges& e) { tally.AddCharges(ChargeWindow::From(e)); };
  auto started = StartMachineTracer(sink, fss);
  if (!started) return Unexpected(started.error());
  std::unique_ptr<Tracer> tracer = std::move(*started);
  tracer->SetSlow(1'000'000);  // a throttled write sleeps a jiffy at least
  MeminfoReader mem;
  LiveTable screen;
  const bool live = !spec.quiet && isatty(STDOUT_FILENO);
  uint64_t last = start;
  for (;;) {
    tracer->Poll(50);
    const uint64_t now = NowNs();
    if (ctx.Interrupted() || (spec.duration_ns && now - start >= spec.duration_ns)) break;
    if (now - last < spec.interval_ns) continue;
    const TopInterval iv = tally.Close(now, false);
    last = now;
    if (!live) continue;
    TopScreenContext sc;
    sc.elapsed_s = static_cast<double>(now - start) / 1e9;
    if (auto m = mem.Read()) sc.dirty = m->dirty, sc.writeback = m->writeback;
    sc.rows = spec.rows;
    screen.Draw(stdout, TopScreen(iv, tally.Run(), tally.RunStalls(), sc));
  }
  if (live) screen.Erase(stdout);
  tracer->Stop();
  tracer->Poll(0);
  for (const TraceCharges& w : tracer->OpenWindows()) tally.AddCharges(ChargeWindow::From(w));
  const uint64_t end = NowNs();
  tally.Close(end, true);
  FillTopDocument(spec, tally, start, end, TopNotes(*tracer, tally), doc);
  return {};
}

}  // namespace writelab
