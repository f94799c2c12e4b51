# SPDX-License-Identifier: MIT
# Many clients at once (src/mpi, docs/mpi.md): with MPI found (Debian's
# libopenmpi-dev), writelab links it and runs on every rank under mpirun or
# srun. Without a launcher it never calls MPI_Init, so a plain run is the
# same either way. WRITELAB_MPI=OFF builds without it; under a launcher
# that started several ranks that writelab then refuses to run.
enable_language(C)  # FindMPI looks for MPI's C interface with the C compiler
find_package(MPI COMPONENTS C QUIET)
option(WRITELAB_MPI "Run experiments on many ranks under mpirun or srun (needs MPI, e.g. libopenmpi-dev)"
  ${MPI_C_FOUND})
if(WRITELAB_MPI)
  if(NOT MPI_C_FOUND)
    message(FATAL_ERROR "WRITELAB_MPI=ON needs MPI for C (Debian: libopenmpi-dev), or configure "
      "with -DWRITELAB_MPI=OFF")
  endif()
  target_sources(writelab_core PRIVATE src/mpi/team_mpi.cc)
  # The C interface only: Open MPI's deprecated C++ bindings would need libmpi_cxx.
  set_source_files_properties(src/mpi/team_mpi.cc PROPERTIES
    COMPILE_DEFINITIONS "OMPI_SKIP_MPICXX=1;MPICH_SKIP_MPICXX=1")
  target_link_libraries(writelab_core PUBLIC MPI::MPI_C)
  message(STATUS "writelab: with MPI ${MPI_C_VERSION}")
else()
  target_sources(writelab_core PRIVATE src/mpi/team_off.cc)
endif()
