// SPDX-License-Identifier: MIT
// `writelab records`: options → RecordsSpec → RunRecords → reporters.
#include <algorithm>
#include <memory>
#include <string>

#include "command/count_option.h"
#include "command/errors.h"
#include "command/options.h"
#include "command/outputs.h"
#include "command/wire.h"
#include "experiments/records/def.h"
#include "experiments/records/records.h"

namespace writelab {
namespace {

struct RecordsOptions {
  RecordsSpec spec;
  std::string corpus_size = "8M";
  std::string total = "256M";
  std::string sync_total = "4M";
  std::string buffer = "1M";
  std::string commit_time = "2s";
  std::vector<std::string> methods;
  std::vector<std::string> syncs;
  bool no_verify = false;
  OutputOptions out;
  TargetOptions targets;
};

std::expected<RecordsSpec, std::string> BuildSpec(RecordsOptions& o) {
  RecordsSpec spec = o.spec;
  struct SizeField {
    const char* name;
    const std::string* text;
    uint64_t* into;
  };
  for (const SizeField& f : {SizeField{"--corpus-size", &o.corpus_size, &spec.corpus_size},
                             SizeField{"--total", &o.total, &spec.total},
                             SizeField{"--sync-total", &o.sync_total, &spec.sync_total},
                             SizeField{"--buffer", &o.buffer, &spec.buffer}}) {
    auto v = SizeOption(f.name, *f.text);
    if (!v) return std::unexpected(v.error());
    *f.into = *v;
  }
  auto commit_time = DurationOption("--commit-time", o.commit_time);
  if (!commit_time) return std::unexpected(commit_time.error());
  spec.commit_time_ns = *commit_time;
  spec.verify = !o.no_verify;
  auto methods = ChoicesOption("--method", "method", kRecordMethods, o.methods);
  if (!methods) return std::unexpected(methods.error());
  spec.methods = *methods;
  for (const std::string& text : o.syncs) {
    auto s = ParseRecordSync(text);
    if (!s) return std::unexpected(s.error());
    spec.syncs.push_back(*s);
  }
  if (auto ok = ValidateRecordsSpec(spec); !ok) return std::unexpected(ok.error());
  return spec;
}

// --commit and what only it reads.
void AddCommitOptions(CLI::App& sub, RecordsOptions& o) {
  sub.add_flag("--commit", o.spec.commit,
               "Group commit mode: per-thread fdatasync against RecordWriter group commit");
  sub.add_option("--threads", o.spec.threads, "Thread counts for --commit (default: 1,2,4,8,16)")
      ->delimiter(',')
      ->check(Count(1, 1024));
  sub.add_option("--commit-time", o.commit_time, "Duration of each --commit row")
      ->capture_default_str();
}

}  // namespace

void AddRecordsCommand(CLI::App& app, CommandAction* action) {
  auto o = std::make_shared<RecordsOptions>();
  CLI::App* sub = app.add_subcommand(
      "records",
      "Small-record write strategies (writev-speed.c, LKML 2002): a linked list of lines written "
      "with write, fwrite, fwrite_unlocked, writev, a gather buffer, io_uring and writelab's "
      "RecordWriter; with --commit, group commit against per-thread fdatasync. See "
      "docs/records.md.");
  sub->add_option("--dir", o->spec.dir,
                  "Write new files in DIR, removed afterwards (default: the current directory)")
      ->option_text("DIR");
  sub->add_option("--input", o->spec.input,
                  "Write the lines of FILE (default: a generated corpus with C source's line "
                  "lengths)")
      ->option_text("FILE");
  sub->add_option("--corpus-size", o->corpus_size, "Size of the generated corpus")
      ->capture_default_str();
  sub->add_option("--seed", o->spec.seed, "Seed of the generated corpus")
      ->check(Count(0, UINT64_MAX))
      ->capture_default_str();
  sub->add_option("--method", o->methods,
                  ListHelp("Methods to run, comma-separated (default: all):", kRecordMethods))
      ->delimiter(',');
  sub->add_option(
         "--sync", o->syncs,
         ListHelp("Durability, comma-separated for several (default: none):", RecordSyncs()))
      ->delimiter(',');
  auto* total = sub->add_option("--total", o->total, "Bytes per row, whole lines (unsynchronised)")
                    ->capture_default_str();
  sub->add_option("--passes,--repeat", o->spec.passes,
                  "Passes over the corpus per row, instead of --total (Morton: 1000; --repeat: its "
                  "old name). Trials are --rounds")
      ->check(Count(1, 1000000))
      ->excludes(total);
  sub->add_option("--sync-total", o->sync_total,
                  "Bytes per row of the synchronous variants (osync, odsync, every:N, rwf-dsync)")
      ->capture_default_str();
  sub->add_option("--buffer", o->buffer, "Buffer of gather, io_uring and library")
      ->capture_default_str();
  sub->add_option("--qd", o->spec.qd, "io_uring requests in flight")
      ->check(Count(1, 4096))
      ->capture_default_str();
  sub->add_option("--batch", o->spec.batch,
                  "io_uring: the most buffers submitted by one io_uring_enter (default: --qd; 1 "
                  "submits each buffer alone)")
      ->check(Count(1, 4096));
  sub->add_option("--rounds", o->spec.rounds, "Trials per row; the order rotates each round")
      ->check(Count(1, 1000))
      ->capture_default_str();
  // --verify is the default: accepted, and refused beside --no-verify.
  auto* verify = sub->add_flag("--verify")
                     ->description("Read each file back and compare it with the input (default)");
  sub->add_flag("--no-verify", o->no_verify, "Skip the byte-for-byte check")->excludes(verify);
  AddCommitOptions(*sub, *o);
  WireExperimentCommand(
      *sub, action, o, [](auto& opts) { return BuildSpec(opts); }, DirOrFile<RecordsSpec>,
      [](const auto& spec, const std::string& target, const RunContext& ctx, ExperimentResult& e) {
        return RunRecords(InTarget(spec, target), ctx, e);
      });
}

}  // namespace writelab
