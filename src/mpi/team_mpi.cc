// SPDX-License-Identifier: MIT
// The team over MPI (WRITELAB_MPI=ON). Every collective is non-blocking and
// waited for by polling, for two reasons: a rank that waits must not take a
// CPU from a rank that is still measuring (ranks may share a machine), so
// after a short spin it sleeps between polls; and an interrupted rank must
// not wait for ever on one that is stuck in a long fsync, since mpirun
// follows its SIGTERM with SIGKILL a second later.
#include <mpi.h>
#include <time.h>

#include <cstring>
#include <limits>
#include <memory>

#include "core/clock.h"
#include "mpi/team.h"

namespace writelab {
namespace {

// Merges histograms as MPI_Reduce combines them. MPI may hand over buffers
// of its own, so they are copied into aligned objects first.
void MergeHistograms(void* in, void* inout, int* len, MPI_Datatype*) {
  auto* src = static_cast<const unsigned char*>(in);
  auto* dst = static_cast<unsigned char*>(inout);
  for (int i = 0; i < *len; ++i) {
    auto a = std::make_unique<Histogram>(), b = std::make_unique<Histogram>();
    std::memcpy(static_cast<void*>(a.get()), src + i * sizeof(Histogram), sizeof(Histogram));
    std::memcpy(static_cast<void*>(b.get()), dst + i * sizeof(Histogram), sizeof(Histogram));
    b->Merge(*a);
    std::memcpy(dst + i * sizeof(Histogram), static_cast<const void*>(b.get()), sizeof(Histogram));
  }
}

void Nap(uint64_t ns) {
  timespec ts{0, static_cast<long>(ns)};
  nanosleep(&ts, nullptr);
}

class MpiTeam final : public Team {
 public:
  explicit MpiTeam(std::atomic<bool>* interrupted) : Team(interrupted) {
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    MPI_Type_contiguous(static_cast<int>(sizeof(Histogram)), MPI_BYTE, &histogram_type_);
    MPI_Type_commit(&histogram_type_);
    MPI_Op_create(&MergeHistograms, 1, &merge_op_);
  }
  ~MpiTeam() override {
    if (broken_) return;  // MPI is not to be touched again
    MPI_Op_free(&merge_op_);
    MPI_Type_free(&histogram_type_);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string library() const override {
    char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
    int len = 0;
    MPI_Get_library_version(text, &len);
    std::string s(text, static_cast<size_t>(len));
    s = s.substr(0, s.find_first_of("\n,"));
    return s;
  }

  std::optional<std::vector<std::string>> Gather(const std::string& mine) override;
  std::optional<std::string> Broadcast(const std::string& from_root) override;
  bool MergeToRoot(Histogram& h) override;
  std::vector<ClockOffset> MeasureClocks() override;

 protected:
  bool AllMax(int code, int* max_code, int* at_rank) override;

 private:
  static constexpr int kTagData = 17, kTagPing = 18, kTagPong = 19;
  // Waits for every request; false when the team broke meanwhile. spin: do
  // not sleep between polls (the clock check, whose replies must be prompt).
  bool Wait(std::vector<MPI_Request>& requests, bool spin = false);
  bool Wait(MPI_Request request, bool spin = false) {
    std::vector<MPI_Request> one = {request};
    return Wait(one, spin);
  }
  // A collective's buffers are on the heap: when it failed to start or to
  // finish its requests may still be pending, so the buffers are leaked
  // rather than freed under MPI, and the team is broken: this rank could no
  // longer match the others' collectives.
  template <class State>
  bool Keep(std::unique_ptr<State>& state, bool ok) {
    if (!ok) {
      (void)state.release();
      broken_ = true;
    }
    return ok;
  }

  int rank_ = 0, size_ = 1;
  uint64_t interrupted_at_ = 0;  // when a wait first saw the interrupt (NowNs)
  MPI_Datatype histogram_type_;
  MPI_Op merge_op_;
};

bool MpiTeam::Wait(std::vector<MPI_Request>& requests, bool spin) {
  if (broken_) return false;
  const uint64_t start = NowNs();
  for (unsigned polls = 0;; ++polls) {
    int done = 0;
    if (MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done,
                    MPI_STATUSES_IGNORE) != MPI_SUCCESS) {
      broken_ = true;
      return false;
    }
    if (done) return true;
    const uint64_t now = NowNs();
    // One grace for the whole team, from the first wait that saw the
    // interrupt: rank 0 must still write before mpirun's SIGKILL.
    if (LocallyInterrupted() && !patient_) {
      if (interrupted_at_ == 0) interrupted_at_ = now;
      if (now - interrupted_at_ > kInterruptGraceNs) {
        broken_ = true;  // the requests stay pending: their buffers are kept (Keep)
        return false;
      }
    }
    if (spin || polls < 200) continue;
    // 50 us naps for the first 20 ms, then 1 ms: a step ends within about a
    // nap of the last rank reaching it.
    Nap(now - start < 20'000'000 ? 50'000 : 1'000'000);
  }
}

bool MpiTeam::AllMax(int code, int* max_code, int* at_rank) {
  struct Pair {
    int value;
    int rank;
  };
  struct State {
    Pair in, out;
    MPI_Request req;
  };
  auto st = std::make_unique<State>(State{{code, rank_}, {0, 0}, MPI_REQUEST_NULL});
  bool ok = MPI_Iallreduce(&st->in, &st->out, 1, MPI_2INT, MPI_MAXLOC, MPI_COMM_WORLD, &st->req) ==
                MPI_SUCCESS &&
            Wait(st->req);
  if (!Keep(st, ok)) return false;
  *max_code = st->out.value;
  *at_rank = st->out.rank;
  return true;
}

std::optional<std::vector<std::string>> MpiTeam::Gather(const std::string& mine) {
  if (broken_) return std::nullopt;
  constexpr uint64_t kMax = std::numeric_limits<int>::max();
  struct State {
    std::string mine;
    uint64_t my_size = 0;
    std::vector<uint64_t> sizes;
    std::vector<std::string> all;
    std::vector<MPI_Request> reqs;
  };
  auto st = std::make_unique<State>();
  st->mine = mine;
  st->my_size = mine.size();
  st->sizes.assign(static_cast<size_t>(size_), 0);
  MPI_Request req;
  if (!Keep(st, MPI_Igather(&st->my_size, 1, MPI_UINT64_T, st->sizes.data(), 1, MPI_UINT64_T, 0,
                            MPI_COMM_WORLD, &req) == MPI_SUCCESS &&
                    Wait(req)))
    return std::nullopt;
  if (rank_ != 0) {
    if (st->my_size > kMax) {  // rank 0 refuses it too
      broken_ = true;
      return std::nullopt;
    }
    if (st->my_size == 0) return std::vector<std::string>{};
    if (!Keep(st, MPI_Isend(st->mine.data(), static_cast<int>(st->my_size), MPI_BYTE, 0, kTagData,
                            MPI_COMM_WORLD, &req) == MPI_SUCCESS &&
                      Wait(req)))
      return std::nullopt;
    return std::vector<std::string>{};
  }
  for (int r = 1; r < size_; ++r)
    if (st->sizes[static_cast<size_t>(r)] > kMax) {
      broken_ = true;  // the others wait to send: no collective can follow
      return std::nullopt;
    }
  st->all.resize(static_cast<size_t>(size_));
  st->all[0] = mine;
  for (int r = 1; r < size_; ++r) {
    const uint64_t n = st->sizes[static_cast<size_t>(r)];
    if (n == 0) continue;
    std::string& into = st->all[static_cast<size_t>(r)];
    into.resize(n);
    st->reqs.emplace_back();
    if (MPI_Irecv(into.data(), static_cast<int>(n), MPI_BYTE, r, kTagData, MPI_COMM_WORLD,
                  &st->reqs.back()) != MPI_SUCCESS) {
      broken_ = true;
      (void)st.release();
      return std::nullopt;
    }
  }
  if (!st->reqs.empty() && !Keep(st, Wait(st->reqs))) return std::nullopt;
  return std::move(st->all);
}

std::optional<std::string> MpiTeam::Broadcast(const std::string& from_root) {
  if (broken_) return std::nullopt;
  struct State {
    uint64_t n = 0;
    std::string text;
  };
  auto st = std::make_unique<State>();
  st->n = from_root.size();
  MPI_Request req;
  if (!Keep(st, MPI_Ibcast(&st->n, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD, &req) == MPI_SUCCESS &&
                    Wait(req)))
    return std::nullopt;
  if (st->n > static_cast<uint64_t>(std::numeric_limits<int>::max())) {
    broken_ = true;  // every rank sees the same size: every rank stops here
    return std::nullopt;
  }
  st->text = rank_ == 0 ? from_root : std::string(st->n, '\0');
  if (st->n == 0) return std::move(st->text);
  if (!Keep(st, MPI_Ibcast(st->text.data(), static_cast<int>(st->n), MPI_BYTE, 0, MPI_COMM_WORLD,
                           &req) == MPI_SUCCESS &&
                    Wait(req)))
    return std::nullopt;
  return std::move(st->text);
}

bool MpiTeam::MergeToRoot(Histogram& h) {
  if (broken_) return false;
  auto copy = std::make_unique<Histogram>(h);  // MPI works on a copy it may keep
  MPI_Request req;
  void* send = rank_ == 0 ? MPI_IN_PLACE : static_cast<void*>(copy.get());
  bool ok = MPI_Ireduce(send, copy.get(), 1, histogram_type_, merge_op_, 0, MPI_COMM_WORLD, &req) ==
                MPI_SUCCESS &&
            Wait(req);
  if (!Keep(copy, ok)) return false;
  h = *copy;
  return true;
}

// NTP's estimate, per rank: rank 0 sends its time, the rank answers with
// its own; of 16 exchanges the one with the shortest round trip is kept,
// offset = their time - the midpoint of ours. A rank waits for its turn
// with naps, then answers without them, so its replies are prompt.
std::vector<ClockOffset> MpiTeam::MeasureClocks() {
  constexpr int kExchanges = 16;
  std::vector<ClockOffset> out;
  if (broken_) return out;
  struct State {
    uint64_t ping = 0, pong = 0;
    std::vector<MPI_Request> reqs = std::vector<MPI_Request>(2, MPI_REQUEST_NULL);
  };
  auto st = std::make_unique<State>();
  if (rank_ != 0) {
    for (int i = 0; i < kExchanges; ++i) {
      MPI_Request req;
      if (!Keep(st, MPI_Irecv(&st->ping, 1, MPI_UINT64_T, 0, kTagPing, MPI_COMM_WORLD, &req) ==
                            MPI_SUCCESS &&
                        Wait(req, i > 0)))
        return out;
      st->pong = NowNs();
      if (!Keep(st, MPI_Isend(&st->pong, 1, MPI_UINT64_T, 0, kTagPong, MPI_COMM_WORLD, &req) ==
                            MPI_SUCCESS &&
                        Wait(req, true)))
        return out;
    }
    return out;
  }
  out.resize(static_cast<size_t>(size_));
  for (int r = 1; r < size_; ++r) {
    ClockOffset best{0, std::numeric_limits<uint64_t>::max()};
    for (int i = 0; i < kExchanges; ++i) {
      st->ping = NowNs();
      if (!Keep(st, MPI_Irecv(&st->pong, 1, MPI_UINT64_T, r, kTagPong, MPI_COMM_WORLD,
                              &st->reqs[1]) == MPI_SUCCESS &&
                        MPI_Isend(&st->ping, 1, MPI_UINT64_T, r, kTagPing, MPI_COMM_WORLD,
                                  &st->reqs[0]) == MPI_SUCCESS &&
                        Wait(st->reqs, true)))
        return {};
      const uint64_t t0 = st->ping, t1 = NowNs();
      if (t1 - t0 < best.rtt_ns)
        best = {static_cast<int64_t>(st->pong) - static_cast<int64_t>(t0 + (t1 - t0) / 2), t1 - t0};
    }
    out[static_cast<size_t>(r)] = best;
  }
  return out;
}

}  // namespace

std::expected<std::unique_ptr<Team>, std::string> StartTeam(int* argc, char*** argv,
                                                            std::atomic<bool>* interrupted) {
  if (!LaunchFromEnvironment().launched) return nullptr;
  int provided = 0;
  if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
    return std::unexpected("MPI_Init_thread failed");
  return std::make_unique<MpiTeam>(interrupted);
}

void EndTeam(std::unique_ptr<Team> team) {
  if (!team) return;
  const bool broken = team->broken();
  team.reset();
  if (!broken) MPI_Finalize();
}

}  // namespace writelab
