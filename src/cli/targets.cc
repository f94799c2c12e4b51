// SPDX-License-Identifier: MIT
#include "cli/targets.h"

#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>

#include "core/units.h"
#include "explain/explainer.h"
#include "io/file.h"
#include "io/trusted_dir.h"
#include "mpi/session.h"
#include "port/no_memory.h"
#include "telemetry/identify.h"
#include "telemetry/memory_budget.h"
#include "testbed/testbed.h"

namespace writelab {

Result<std::unique_ptr<UndoJournal>> OpenRunJournal() {
  if (geteuid() != 0) return std::unique_ptr<UndoJournal>();
  auto j = UndoJournal::Open();
  if (!j) return Unexpected(j.error());
  return std::move(*j);
}

Result<std::unique_ptr<Explainer>> StartExplainerAt(const std::string& where,
                                                    const std::string& device) {
  auto scope = ExplainScopeOf(where, device);
  if (!scope) return Unexpected(scope.error());
  return StartExplainer(*scope);
}

namespace {

// Runs the experiment in dir into a new result at the end of doc, with
// --explain's programs loaded for the target when asked (where: an existing
// path on it, dir or the parent of a file still to be made). A failure to
// load them adds no result.
Status RunExplained(bool explain, const std::string& dir, const std::string& where,
                    const std::string& device, const RunContext& ctx, Document& doc,
                    const ExperimentRun& run) {
  std::unique_ptr<Explainer> explainer;
  if (explain) {
    auto started = StartExplainerAt(where, device);
    if (!started) return Unexpected(started.error());
    explainer = std::move(*started);
  }
  RunContext with = ctx;
  with.explainer = explainer.get();
  doc.experiments.emplace_back();
  return FailingOnNoMemory("allocate the run's buffers",
                           [&] { return run(with, dir, doc.experiments.back()); });
}

// Runs under each scheduler (or as it is), switching and restoring the
// device's scheduler around each run.
Status RunUnderSchedulers(const TargetOptions& t, const std::string& dir, const std::string& label,
                          bool dio, UndoJournal* journal, const RunContext& ctx, Document& doc,
                          const ExperimentRun& run) {
  std::vector<std::string> schedulers = t.schedulers;
  // A file that does not exist yet lives on its directory's device.
  struct stat st;
  bool exists = stat(dir.c_str(), &st) == 0;
  const std::string where = exists ? dir : ParentDir(dir);
  Target target = IdentifyTarget(where);
  const std::string& device = target.device;
  // Every scheduler the device offers, by default, only for a raw device the
  // experiment owns outright: never the system disk under a file.
  if (schedulers.empty() && t.all_schedulers_by_default && journal && exists && S_ISBLK(st.st_mode))
    schedulers = target.schedulers;
  if (schedulers.empty()) schedulers.push_back("");
  for (const std::string& sched : schedulers) {
    if (ctx.Interrupted()) return std::unexpected(PlainError("interrupted"));
    const size_t before = doc.experiments.size();
    std::optional<ScopedChange> switched;
    Target switched_to = target;  // what the experiment finds, once
    if (!sched.empty() && !device.empty()) switched_to.scheduler = sched;
    RunContext run_ctx = ctx;
    run_ctx.target = &switched_to;
    if (!sched.empty() && device.empty()) {  // tmpfs: one run, saying why there are no others
      Status st = RunExplained(t.explain, dir, where, device, run_ctx, doc, run);
      if (!st && doc.experiments.size() == before) return st;
      ExperimentResult& e = doc.experiments.back();
      e.testbed = label;
      e.notes.push_back("no block device under " + dir + ": --scheduler does not apply");
      return st;
    }
    if (!sched.empty()) {
      auto s = SetSysfs(*journal, "/sys/block/" + device + "/queue/scheduler", sched);
      if (!s)
        return std::unexpected(
            PlainError("--scheduler " + sched + " on " + device + ": " + s.error().Message()));
      switched.emplace(std::move(*s));
    }
    Status st = RunExplained(t.explain, dir, where, device, run_ctx, doc, run);
    if (!st && doc.experiments.size() == before) return st;
    ExperimentResult& e = doc.experiments.back();
    e.testbed = label;
    e.loop_direct_io = dio;
    e.scheduler = sched;
    if (!st) return st;
  }
  return {};
}

// Refuses an empty value: `--testbed ''` or `--scheduler ''` would otherwise
// mean "no test bed" or "the current scheduler" without a word. (CLI11
// itself drops empty items between the commas of --scheduler.)
CLI::Validator NotEmpty(const char* instead) {
  return CLI::Validator(
      [instead](std::string& value) {
        return value.empty() ? std::string("empty value (") + instead + ")" : std::string();
      },
      "");
}

}  // namespace

void AddTargetOptions(CLI::App& sub, TargetOptions& o) {
  auto* g = sub.add_option_group("test beds", "Run on file systems made for the run (root)");
  g->add_option("--testbed", o.testbeds,
                "Test beds, comma-separated: FS[:OPTION...] with FS ext4, xfs, btrfs or tmpfs "
                "(or raw, a bare loop device, for stride); OPTION a mount option, or nojournal "
                "for ext4. e.g. "
                "ext4:data=ordered,ext4:data=journal,ext4:nojournal,xfs")
      ->option_text("SPEC[,SPEC...]")
      ->check(NotEmpty("leave --testbed out to run in the directory given"));
  g->add_option("--testbed-size", o.testbed_size, "Size of each test bed's sparse file")
      ->capture_default_str();
  g->add_option("--scratch", o.scratch, "Directory for the test beds' sparse files")
      ->capture_default_str();
  g->add_option("--scheduler", o.schedulers,
                "Run under each of these I/O schedulers of the device under test, e.g. "
                "none,mq-deadline,kyber,bfq (root; the previous one is restored)")
      ->delimiter(',')
      ->check(NotEmpty("leave --scheduler out to keep the device's scheduler"));
  sub.add_flag("--explain", o.explain,
               "Say where the time went, from the kernel's tracepoints (root; BPF): adds the "
               "attribution figures of docs/explain.md to every row");
}

namespace {

// A test bed's sparse file fills as the bed is written: one larger than the
// scratch file system's free space could fill it, and the bed's writes
// would then fail as I/O errors of the loop device.
std::optional<std::string> CheckTestbedRoom(int scratch_fd, const std::string& scratch,
                                            uint64_t size) {
  struct statvfs st;
  if (fstatvfs(scratch_fd, &st) != 0) return std::nullopt;  // Provision says what fails
  const uint64_t free = static_cast<uint64_t>(st.f_bavail) * st.f_frsize;
  if (size <= free) return std::nullopt;
  return "--testbed-size " + FormatBytes(static_cast<double>(size)) + ": more than the " +
         FormatBytes(static_cast<double>(free)) + " free under --scratch " + scratch +
         " (the sparse file could fill it); give a smaller size or another --scratch";
}

}  // namespace

std::optional<std::string> CheckTargets(const TargetOptions& t, bool has_file,
                                        const RunContext& ctx) {
  if (ctx.team && ctx.team->size() > 1) {  // each of these changes, or looks at, one machine
    if (!t.testbeds.empty())
      return "--testbed: not under MPI: a test bed changes a single machine (run it without "
             "mpirun)";
    if (!t.schedulers.empty())
      return "--scheduler: not under MPI: it changes a single machine's device (run it "
             "without mpirun)";
    if (has_file) return "--file: under MPI every rank writes files of its own: give --dir";
    if (t.explain)
      return "--explain: not under MPI: its attribution is per machine and would count the "
             "other ranks' I/O (run it without mpirun)";
  }
  if (!t.testbeds.empty()) {
    auto parsed = ParseTestbeds(t.testbeds);
    if (!parsed) return parsed.error();
    if (has_file) return "--file cannot be used with --testbed";
    for (const TestbedSpec& b : *parsed) {
      if (t.raw_device && b.fs != "raw")
        return "--testbed: this experiment writes a raw device: use --testbed raw";
      if (!t.raw_device && b.fs == "raw")
        return "--testbed raw: this experiment needs a file system";
    }
  }
  if (t.explain)
    if (auto refusal = ExplainRefusal()) return *refusal;
  if ((!t.testbeds.empty() || !t.schedulers.empty()) && geteuid() != 0)
    return t.testbeds.empty() ? "--scheduler needs root" : "test beds need root";
  auto size = SizeOption("--testbed-size", t.testbed_size);
  if (!size) return size.error();
  if (*size < (64u << 20)) return "--testbed-size: at least 64 MiB";
  if (t.testbeds.empty()) return std::nullopt;
  const std::vector<TestbedSpec> beds = *ParseTestbeds(t.testbeds);
  auto any = [&](bool tmpfs) {
    return std::any_of(beds.begin(), beds.end(),
                       [&](const TestbedSpec& b) { return (b.fs == "tmpfs") == tmpfs; });
  };
  if (any(false)) {  // a bed on a loop device: its sparse file goes in --scratch
    auto scratch = OpenTrustedDir(t.scratch, DirUse::kPrivate, true);
    if (!scratch) return "--scratch: " + scratch.error().Message();
    if (auto full = CheckTestbedRoom(scratch->get(), t.scratch, *size)) return full;
  }
  if (any(true))  // a tmpfs bed's size is memory it may take
    if (auto big = CheckMemory(
            "--testbed-size " + FormatBytes(static_cast<double>(*size)) + " (a tmpfs test bed)",
            *size))
      return big;
  return std::nullopt;
}

namespace {

// The run under MPI: every rank in its own files in dir, together, and rank
// 0 alone prints and writes (mpi/session.h).
int RunOnTeam(const std::string& dir, const RunContext& ctx, Document& doc,
              const OutputOptions& out, const ExperimentRun& run) {
  Team& team = *ctx.team;
  auto opened = OpenRunJournal();  // as root: the loads' groups, the run's own files
  if (!opened) {
    const int code =
        team.rank() == 0 ? Finish(doc, out, Unexpected(opened.error())) : kExitRunFailed;
    return ShareExitCode(team, code);
  }
  std::unique_ptr<UndoJournal> journal = std::move(*opened);
  OwnFilesJournaled own_files(journal.get());
  if (auto refused = MeetRanks(team, dir, doc)) {
    if (team.rank() == 0) PrintError(*refused);
    return kExitUsage;
  }
  RunContext run_ctx = ctx;
  run_ctx.journal = journal.get();
  Status status = RunOnRanks(
      team, run_ctx, doc, [&](const RunContext& c, ExperimentResult& e) { return run(c, dir, e); });
  const int code = team.rank() == 0 ? Finish(doc, out, status) : status ? kExitOk : kExitRunFailed;
  return ShareExitCode(team, code);
}

}  // namespace

int RunOnTargets(const TargetOptions& t, const std::string& dir, bool has_file,
                 const RunContext& ctx, Document& doc, const OutputOptions& out,
                 const ExperimentRun& run) {
  // A team of one rank with a test bed, a scheduler, --file or --explain is
  // one machine's run: as without MPI.
  const bool one_machine = !t.testbeds.empty() || !t.schedulers.empty() || has_file || t.explain;
  if (ctx.team && !one_machine) return RunOnTeam(dir, ctx, doc, out, run);
  if (ctx.team) {
    RunContext alone = ctx;
    alone.team = nullptr;
    return RunOnTargets(t, dir, has_file, alone, doc, out, run);
  }
  std::vector<TestbedSpec> beds;
  if (!t.testbeds.empty()) beds = *ParseTestbeds(t.testbeds);
  const uint64_t size = *SizeOption("--testbed-size", t.testbed_size);
  auto opened = OpenRunJournal();  // as root, every run may change the system
  if (!opened) return Finish(doc, out, Unexpected(opened.error()));
  std::unique_ptr<UndoJournal> journal = std::move(*opened);
  RunContext run_ctx = ctx;
  run_ctx.journal = journal.get();
  Status status;
  if (beds.empty()) {
    OwnFilesJournaled own_files(journal.get());
    status = RunUnderSchedulers(t, dir, "", false, journal.get(), run_ctx, doc, run);
  }
  for (const TestbedSpec& bed : beds) {
    if (ctx.Interrupted()) {
      status = std::unexpected(PlainError("interrupted"));
      break;
    }
    auto tb = Testbed::Provision(bed, {size, t.scratch, ctx.interrupted}, *journal);
    if (!tb) {
      status = std::unexpected(PlainError("test bed " + bed.label + ": " + tb.error().Message()));
      break;
    }
    RunContext bed_ctx = run_ctx;
    bed_ctx.testbed = true;
    status = RunUnderSchedulers(t, (*tb)->mount_point(), bed.label, (*tb)->loop_direct_io(),
                                journal.get(), bed_ctx, doc, run);
    if (!status) break;
  }
  return Finish(doc, out, status);
}

}  // namespace writelab
