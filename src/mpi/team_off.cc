// SPDX-License-Identifier: MIT
// The team in a build without MPI (WRITELAB_MPI=OFF): there is none. Under a
// launcher that started several ranks, each would measure alone and write
// its own document: refused instead.
#include "mpi/team.h"

namespace writelab {

std::expected<std::unique_ptr<Team>, std::string> StartTeam(int*, char***, std::atomic<bool>*) {
  Launch l = LaunchFromEnvironment();
  if (l.launched && l.size > 1)
    return std::unexpected(
        "started as one of " + std::to_string(l.size) +
        " MPI ranks, but this writelab was built without MPI (WRITELAB_MPI=OFF): install "
        "libopenmpi-dev and build again, or run it without mpirun");
  return nullptr;
}

void EndTeam(std::unique_ptr<Team>) {}

}  // namespace writelab
