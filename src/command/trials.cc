// SPDX-License-Identifier: MIT
#include "command/trials.h"

#include <climits>
#include <cstdlib>

#include "explain/figures.h"
#include "telemetry/identify.h"

namespace writelab {

bool TeamStep(const RunContext& ctx) { return !ctx.team || ctx.team->Step(); }

Error TeamStopped(const RunContext& ctx) {
  return ctx.team ? ctx.team->StopReason() : PlainError("interrupted");
}

bool MeasuresHere(const RunContext& ctx) { return !ctx.team || ctx.team->role() == Role::kMeasure; }

void RecordTrial(const RunContext& ctx, TrialSpan span,
                 const std::vector<TrialLatency>& latencies) {
  if (ctx.team) ctx.team->Record(std::move(span), latencies);
}

Target TargetOf(const RunContext& ctx, const std::string& path) {
  if (ctx.target) {
    char resolved[PATH_MAX];  // IdentifyTarget names a target by its resolved path
    if (realpath(path.c_str(), resolved) && ctx.target->path == resolved) return *ctx.target;
  }
  return IdentifyTarget(path);
}

size_t CellAt(size_t k, int round, size_t cells, int rounds) {
  const auto r = static_cast<size_t>(round), n = static_cast<size_t>(rounds);
  const size_t shift = n < cells ? r * cells / n : r % cells;
  return (k + shift) % cells;
}

std::string RotationNote(int rounds, const char* what) {
  if (rounds <= 1) return "";
  return std::string(what ? "the order of the " + std::string(what) + " rotates"
                          : "order rotates") +
         " each round; figures are medians over rounds with min-max";
}

void AddTrialNotes(const RunContext& ctx, const std::string& rotation_note,
                   std::initializer_list<ExplainProbe> groups, ExperimentResult& out) {
  if (!rotation_note.empty()) out.notes.push_back(rotation_note);
  if (ctx.explainer)
    for (std::string& n : ExplainNotes(*ctx.explainer, groups)) out.notes.push_back(std::move(n));
}

}  // namespace writelab
