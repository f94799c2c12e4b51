// SPDX-License-Identifier: MIT
// What every command's run gets from the command line besides its spec:
// where progress goes, whether the user asked to stop, and the run-wide
// services (undo journal, explainer, MPI team, the target identified, the
// faults to inject), each null when the run has none. No globals
// (docs/style.md 9).
#pragma once

#include <atomic>
#include <cstdio>
#include <memory>

namespace writelab {

class UndoJournal;
class Explainer;
class Team;
class WriteEngine;
class FaultInjector;
struct Target;

struct RunContext {
  // Where system changes are journaled (root runs); null when none may be made.
  UndoJournal* journal = nullptr;
  // Live progress line ("\r...") when stdout is a terminal; null for none.
  std::FILE* progress = nullptr;
  // Set by the SIGINT/SIGTERM handler; experiments stop at the next block.
  const std::atomic<bool>* interrupted = nullptr;

  // --explain: the attribution counters of this target; null when off.
  // Experiments measure through ExplainSpan (explain/explainer.h).
  Explainer* explainer = nullptr;

  // Under MPI (mpi/team.h): the ranks this process runs with; null for a run
  // on one machine. Experiments take a Step() before every trial they plan.
  Team* team = nullptr;

  // The target the command identified for this run (after switching its
  // scheduler), so that an experiment need not look again: see TargetOf
  // (command/trials.h). Null: none yet.
  const Target* target = nullptr;

  // The target is a test bed writelab made (--testbed): its device is
  // writelab's to change for the run (fsync's default background).
  bool testbed = false;
  // Faults to inject (WRITELAB_FAULT, tests only); null for none.
  FaultInjector* faults = nullptr;

  bool Interrupted() const { return interrupted && interrupted->load(std::memory_order_relaxed); }
  // Every engine an experiment measures with is made through here, so that
  // injected faults reach it. Without faults the engine is returned as is.
  // (Defined with the fault injector, io/fault_engine.cc.)
  std::unique_ptr<WriteEngine> Engine(std::unique_ptr<WriteEngine> engine) const;
};

}  // namespace writelab
