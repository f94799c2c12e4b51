// SPDX-License-Identifier: MIT
// Many ranks at once (docs/mpi.md): writelab started by mpirun or srun runs
// one experiment on every rank, each on its own files in the same
// directory. The Team is what the ranks share: who they are, the steps they
// take together (a barrier before every trial), what each rank's trials
// measured, and the collectives that bring it all to rank 0 afterwards.
//
// Experiments see the team through RunContext::team (null: one process, the
// plain build or a run without a launcher). They call Step() before every
// trial they plan, also one they skip, so that every rank takes the same
// steps in the same order, and Record() after a trial they ran. Nothing of
// this is inside a timed part: Step() returns before the clock starts and
// Record() only stores.
//
// Only the thread that made the team calls it (MPI_THREAD_FUNNELED).
#pragma once

#include <atomic>
#include <cstdint>
#include <expected>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/histogram.h"
#include "writelab/error.h"

namespace writelab {

// What a rank does in an experiment. fsync --roles gives some ranks the
// background load; the survey's one-client rows leave the others idle.
enum class Role { kMeasure, kBackground, kIdle };

// One trial of one row as one rank ran it, on that rank's clock (NowNs).
struct TrialSpan {
  std::string row;
  int trial = 0;
  Role role = Role::kMeasure;
  uint64_t start_ns = 0;  // the timed part began
  uint64_t end_ns = 0;    // it ended: the row's own time figure ends here
  uint64_t bytes = 0;     // bytes it wrote (0: throughput is not one of the row's figures)
  uint64_t ops = 0;       // lines, commits, iterations: counted under ops_key
  std::string ops_key;    // the aggregate figure of ops ("lines_s"); "" for none
  // Where each of the trial's time series has t = 0, by series key
  // ("timeline"), on this rank's clock: rank 0 moves them onto its own.
  std::map<std::string, uint64_t> origins;
  // The series' cumulative bytes ("written") were 0 at their origin (stream:
  // its counter starts with the trial); otherwise they count from their
  // first point (fsync: the load ran before the trial).
  bool written_from_origin = false;
};

// A latency histogram of one trial, to be merged across ranks.
struct TrialLatency {
  std::string key;  // the row's Latency key: "write", "probe", "total"
  const Histogram* histogram;
};

// A rank's clock against rank 0's, measured by ping-pong at the start:
// rank 0's time = this rank's time - offset_ns, within +-rtt_ns/2.
struct ClockOffset {
  int64_t offset_ns = 0;
  uint64_t rtt_ns = 0;
};

class Team {
 public:
  // How long, after an interrupt, a step or collective waits for the other
  // ranks before it gives up on them: mpirun sends SIGKILL 1 s after
  // SIGTERM (odls_base_sigkill_timeout), and rank 0 still has to write.
  static constexpr uint64_t kInterruptGraceNs = 400'000'000;

  // interrupted: set by the signal handlers; an interrupt on another rank
  // sets it here too, so that every rank stops as on one machine.
  explicit Team(std::atomic<bool>* interrupted) : interrupted_(interrupted) {}
  virtual ~Team() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // "Open MPI v4.1.4, ..." (MPI_Get_library_version, first line)
  virtual std::string library() const = 0;

  // A step every rank takes together, in the same order: returns once every
  // rank has reached it. True to go on; false when some rank failed (failed
  // here, or returned from the experiment with a failure), was interrupted,
  // or the team broke (the grace after an interrupt ran out). After false,
  // StopReason() says why and every later Step() of the experiment is false
  // without waiting.
  bool Step(bool failed = false);
  // Why the last Step() said stop: "interrupted", "stopped: rank 2 failed".
  Error StopReason() const;
  // A step said stop (in this experiment).
  bool stopped() const { return stop_code_ != 0; }
  // A step said stop because another rank failed: this rank's own error,
  // if any, is only the consequence ("stopped: rank 2 failed").
  bool stopped_by_another() const { return stop_code_ == kFailed && stop_rank_ != rank(); }
  // The stop was an interrupt on some rank.
  bool interrupted() const { return stop_code_ == kInterrupted || broken_; }
  // A collective could not finish: no rank can be reached any more.
  bool broken() const { return broken_; }

  // This rank's role in the experiment that runs next (kMeasure unless set).
  Role role() const { return role_; }
  void set_role(Role r) { role_ = r; }

  // Stores what a trial this rank ran measured, and adds its latencies to
  // this rank's histogram of (row, key). No communication.
  void Record(TrialSpan span, const std::vector<TrialLatency>& latencies = {});

  // A new experiment: its steps, spans and histograms start empty, the role
  // is kMeasure again.
  void BeginExperiment();
  const std::vector<TrialSpan>& spans() const { return spans_; }
  // This rank's histograms, by (row, latency key).
  const std::map<std::pair<std::string, std::string>, Histogram>& histograms() const {
    return histograms_;
  }

  // Collectives; on a broken team each returns at once with nothing.
  // Every rank's text, in rank order, on rank 0 (empty elsewhere).
  virtual std::optional<std::vector<std::string>> Gather(const std::string& mine) = 0;
  // Rank 0's text on every rank.
  virtual std::optional<std::string> Broadcast(const std::string& from_root) = 0;
  // Replaces h on rank 0 by the merge of every rank's h: an MPI_Reduce of
  // the bucket arrays, exact (a bucket is the same bucket on every rank).
  virtual bool MergeToRoot(Histogram& h) = 0;
  // On rank 0, every rank's offset (its own is 0); empty elsewhere.
  virtual std::vector<ClockOffset> MeasureClocks() = 0;

  // From now on, on ranks other than 0, collectives wait without the grace
  // after an interrupt: for the last one, where they wait while rank 0
  // writes the results. A rank that gave up would exit without
  // MPI_Finalize, and mpirun would end the job, rank 0 with it, at once.
  void WaitForRankZero() { patient_ = rank() != 0; }

 protected:
  static constexpr int kGo = 0, kInterrupted = 1, kFailed = 2;
  // One all-reduce: the largest code of all ranks and the lowest rank that
  // gave it. False when it could not finish (the team is then broken).
  virtual bool AllMax(int code, int* max_code, int* at_rank) = 0;
  // Whether this process was asked to stop (SIGINT, SIGTERM).
  bool LocallyInterrupted() const {
    return interrupted_ && interrupted_->load(std::memory_order_relaxed);
  }

  std::atomic<bool>* interrupted_;
  bool broken_ = false;
  // Waits give up kInterruptGraceNs after an interrupt, unless this is set
  // (WaitForRankZero).
  bool patient_ = false;

 private:
  int stop_code_ = kGo;
  int stop_rank_ = -1;
  Role role_ = Role::kMeasure;
  std::vector<TrialSpan> spans_;
  std::map<std::pair<std::string, std::string>, Histogram> histograms_;
};

// Starts the team when this process was started by an MPI launcher (mpirun,
// mpiexec, srun: OMPI_COMM_WORLD_SIZE, PMIX_RANK, PMI_RANK or PMI_SIZE in
// the environment) and writelab was built with MPI; MPI_Init is called only
// then, so a plain run is what it was without MPI. nullptr: no launcher.
// An error: a launcher started several ranks of a writelab built without
// MPI (WRITELAB_MPI=OFF), which would only run N unrelated copies.
// interrupted is set by the signal handlers; a peer's interrupt sets it too.
std::expected<std::unique_ptr<Team>, std::string> StartTeam(int* argc, char*** argv,
                                                            std::atomic<bool>* interrupted);

// Whether an MPI launcher started this process, from its environment, and
// how many ranks it started when the environment says (0: it does not).
struct Launch {
  bool launched = false;
  int size = 0;
};
Launch LaunchFromEnvironment();

// Ends MPI for a team that finished its collectives (MPI_Finalize); a broken
// team is left alone (mpirun is ending the job). Before exit.
void EndTeam(std::unique_ptr<Team> team);

// The ranks "0", "1-3", "0,2-4" of a list option (fsync --roles), each below
// size; the error names the text.
std::expected<std::vector<int>, std::string> ParseRanks(const std::string& text, int size);

}  // namespace writelab
