// SPDX-License-Identifier: MIT
// `writelab run`: one run of CMD under a strategy (the shim preloaded, the
// supervisor watching), measured; and the whole command, --compare's rounds
// included, into the document (docs/run.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/histogram.h"
#include "core/outcome.h"
#include "core/result.h"
#include "core/run_context.h"
#include "program/run/spec.h"
#include "program/spawn.h"
#include "writelab/error.h"

namespace writelab {

// A file as one run left it.
struct RunFile {
  std::string path;
  uint64_t written = 0;  // the shim's count, else what the run added
  uint64_t handled = 0;  // by the shim or the supervisor
  uint64_t size = 0;
  bool measured = false;  // a file the strategy is for (--min-file): its cache is measured
  bool small = false;     // CMD wrote less than --min-file to it, and writelab could open it
  std::optional<uint64_t> cached;  // nullopt: not measured, or it could not be
  std::string how;                 // "shim: window-drop", "supervisor: window-drop", "small"...
};

// What one run measured.
struct RunTrial {
  Outcome outcome;
  bool started = true;  // false: CMD could not be run (exec failed)
  RunStrategy strategy = RunStrategy::kPlain;
  int exit_status = -1;  // 128 + N for signal N
  double elapsed_s = 0;
  double settle_s = 0;   // after CMD's exit, until its files were written back
  bool settled = false;  // they were (cachestat said so, within 60 s)
  uint64_t bytes = 0;    // /proc/PID/io write_bytes of the scope
  uint64_t dirty_peak = 0;
  std::vector<RunFile> files;
  std::optional<Histogram> probe;      // --measure
  std::optional<uint64_t> memcg_peak;  // memcg: the most its cgroup was charged
  std::optional<uint64_t> oom_kills;   // memcg: processes the OOM killer ended in it
  int probe_error = 0;
  std::vector<std::string> notes;  // processes without the shim, record errors, losses
};

// Where libwritelab-run.so is: $WRITELAB_RUN_SHIM, beside the writelab
// binary (the build tree), where it is installed relative to the binary
// (a moved prefix), then where it was to be installed; refused unless
// root's (or ours) and writable by nobody else, since it runs inside CMD.
std::expected<std::string, std::string> FindShim();

// Why as, the user CMD runs as (--user, or SUDO_USER), cannot load the shim:
// the dynamic loader opens it with CMD's rights, and a shim under a
// directory that user cannot reach (a build under /root) would fail CMD's
// start with the loader's message on CMD's stderr. Nothing when it can.
std::optional<std::string> ShimUnreadableBy(const RunAs& as, const std::string& shim);

// Whether the kernel and the file system of dir take RWF_DONTCACHE; an
// error says why not (checked on a file no one sees: O_TMPFILE).
std::optional<std::string> DontcacheRefusal(const std::string& dir);

// Runs CMD once as variant says (memcg: in a cgroup journaled in
// ctx.journal) and measures it, until its files were written back.
RunTrial RunOnce(const RunSpec& spec, const RunVariant& variant, const std::string& shim,
                 const RunContext& ctx);

// The whole command: every run (--compare: plain and the strategies,
// rotated over --rounds), then the document's results "run" and "run-files".
// *exit_status: CMD's last status.
Status RunCommand(const RunSpec& spec, const RunContext& ctx, Document& doc, int* exit_status);

}  // namespace writelab
