// `writelab survey`: all five experiments, short, on one directory's file
// system, then recommendations backed by what was just measured. No root
// needed, nothing switched: test beds and schedulers are for the
// experiments' own commands.
#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <memory>
#include <string>

#include "cli/cli.h"
#include "core/clock.h"
#include "experiments/fsync.h"
#include "experiments/prealloc.h"
#include "experiments/records.h"
#include "experiments/stream.h"
#include "experiments/stride.h"
#include "experiments/survey.h"
#include "io/file.h"
#include "io/trusted_dir.h"
#include "report/atomic_file.h"
#include "report/html.h"

namespace writelab {
namespace {

struct SurveyOptions {
  std::string dir = ".";
  std::string html = "writelab-survey.html";
  OutputOptions out;
};

uint64_t FreeBytes(const std::string& dir) {
  struct statvfs v;
  return statvfs(dir.c_str(), &v) == 0 ? static_cast<uint64_t>(v.f_bavail) * v.f_frsize : 0;
}

// The random background must outgrow the dirty-background threshold, or it
// never reaches the disk while we measure (docs/fsync.md).
uint64_t RandomSpan(const Host& host, uint64_t free) {
  uint64_t threshold =
      host.vm.count("dirty_background_bytes") && host.vm.at("dirty_background_bytes")
          ? static_cast<uint64_t>(host.vm.at("dirty_background_bytes"))
          : host.memory_bytes / 100 *
                static_cast<uint64_t>(host.vm.count("dirty_background_ratio")
                                          ? host.vm.at("dirty_background_ratio")
                                          : 10);
  uint64_t span = threshold + threshold / 4;
  span = std::clamp<uint64_t>(span, 256u << 20, std::max<uint64_t>(free / 4, 256u << 20));
  return span / 4096 * 4096;
}

struct Step {
  const char* name;
  const char* what;
  int expected_s;
  std::function<Status(const RunContext&, ExperimentResult&)> run;
};

std::vector<Step> Steps(const std::string& dir, const Host& host) {
  uint64_t free = FreeBytes(dir);
  uint64_t stream_size =
      std::clamp<uint64_t>(free / 8 / (8u << 20) * (8u << 20), 8u << 20, 256u << 20);
  auto validated = [](auto spec, auto validate, auto run) {
    return [spec, validate, run](const RunContext& ctx, ExperimentResult& e) mutable -> Status {
      if (auto ok = validate(spec); !ok) return std::unexpected(PlainError(ok.error()));
      return run(spec, ctx, e);
    };
  };
  StreamSpec stream;
  stream.dir = dir;
  stream.size = stream_size;
  stream.repeat = 2;
  stream.interval_ns = 250'000'000;
  FsyncSpec fsync;
  fsync.dir = dir;
  fsync.count = 10;
  fsync.interval_ns = 200'000'000;
  fsync.methods = {SyncMethod::kFsync, SyncMethod::kFdatasync};
  fsync.bg_span = RandomSpan(host, free);
  fsync.bg_warmup_ns = 1'500'000'000;
  RecordsSpec records;
  records.dir = dir;
  records.corpus_size = 2u << 20;
  records.total = 32u << 20;
  PreallocSpec prealloc;
  prealloc.dir = dir;
  prealloc.file_size = 64u << 20;
  prealloc.writes = 400;
  return {
      {"stream", "streaming strategies", 10, validated(stream, ValidateStreamSpec, RunStream)},
      {"fsync", "sync latency beside background writers", 18,
       validated(fsync, ValidateFsyncSpec, RunFsync)},
      {"records", "small-record write strategies", 5,
       validated(records, ValidateRecordsSpec, RunRecords)},
      {"prealloc", "preallocation modes", 8,
       validated(prealloc, ValidatePreallocSpec, RunPrealloc)},
      {"stride", "strided direct writes", 5,
       [dir](const RunContext& ctx, ExperimentResult& e) {
         StrideSpec spec;
         // Made new (O_EXCL|O_NOFOLLOW) in the checked --dir: stride then
         // opens writelab's own file, never a name planted in a shared dir.
         auto made = CreateOwnFile(dir, "survey-stride", O_WRONLY, &spec.file);
         if (!made) return Status(std::unexpected(made.error()));
         spec.span = 64u << 20;
         spec.steps = {1, 2, 3, 4, 8, 16, 64, 512};
         spec.duration_ns = 500'000'000;
         Status s = ValidateStrideSpec(spec)
                        ? RunStride(spec, spec.file, ctx, e)
                        : std::unexpected(PlainError("stride: invalid survey parameters"));
         unlink(spec.file.c_str());  // writelab's own file
         return s;
       }},
  };
}

int RunSurvey(const SurveyOptions& given, const RunContext& ctx, Document& doc) {
  auto resolved = CheckWorkDir("--dir", given.dir);
  if (!resolved) return UsageError(resolved.error());
  SurveyOptions o = given;
  o.dir = *resolved;  // the checked directory, not a name that may point elsewhere later
  std::vector<Step> steps = Steps(o.dir, doc.host);
  int expected = 0;
  for (const Step& s : steps) expected += s.expected_s;
  std::printf("writelab survey of %s: %zu experiments, about %d s\n", o.dir.c_str(), steps.size(),
              expected);
  Status status;
  const uint64_t start = NowNs();
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    std::printf("[%zu/%zu] %s: %s (about %d s; %.0f s elapsed)\n", i + 1, steps.size(), s.name,
                s.what, s.expected_s, static_cast<double>(NowNs() - start) / 1e9);
    std::fflush(stdout);
    doc.experiments.emplace_back();
    Status st = s.run(ctx, doc.experiments.back());
    if (!st) {
      doc.errors.push_back(std::string(s.name) + ": " + st.error().Message());
      status = std::unexpected(PlainError(std::string(s.name) + " failed"));
    }
    if (ctx.Interrupted()) {
      status = std::unexpected(PlainError("interrupted"));
      break;
    }
  }
  std::printf("survey done in %.0f s\n\n", static_cast<double>(NowNs() - start) / 1e9);
  doc.recommendations = Recommendations(doc);
  int code = Finish(doc, o.out, status);
  if (!o.html.empty()) {
    if (Status s = WriteFileAtomically(o.html, RenderHtml({doc}, EmbeddedHtmlAssets())); !s) {
      PrintError(s.error().Message());
      return kExitRunFailed;
    }
    std::printf("report: %s (open it in a browser; it works offline)\n", o.html.c_str());
  }
  return code;
}

}  // namespace

void AddSurveyCommand(CLI::App& app, CommandAction* action) {
  auto o = std::make_shared<SurveyOptions>();
  o->out.json = "writelab-survey.json";
  CLI::App* sub = app.add_subcommand(
      "survey",
      "The first command to run: short runs of stream, fsync, records, prealloc and stride on "
      "DIR's file system (a few minutes, no root), one results file, and recommendations "
      "backed by the numbers just measured.");
  sub->add_option("--dir", o->dir, "Directory on the file system to survey")->capture_default_str();
  AddOutputOptions(*sub, o->out);
  sub->add_option("-o,--html", o->html, "Write the HTML report with charts to FILE (\"\" for none)")
      ->capture_default_str();
  sub->callback([o, action] {
    *action = [o](const RunContext& ctx, Document& doc) { return RunSurvey(*o, ctx, doc); };
  });
}

}  // namespace writelab
