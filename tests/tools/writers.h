// SPDX-License-Identifier: MIT
// The writers of tests/tools/writers.cc that stand where a program under
// `writelab run` or `writelab explain` is least common (issue 40): each
// returns the program's exit status (0, or 1 with the failed call on
// stderr through Fail).
#pragma once

namespace writers {

int Fail(const char* what);

// COUNT files DIR/tmpI of MIB MiB each, written, closed and deleted in
// turn, PAUSE_MS apart: what a file system of about two of them holds only
// when nobody keeps a deleted one open.
int TempFiles(const char* dir, long count, long mib, long pause_ms);
// MIB 1 MiB writes after entering seccomp's strict mode (read, write, exit
// and sigreturn only: any other system call kills the process).
int Strict(const char* path, long mib);
// MIB 1 MiB writes after installing a filter that kills the process on
// any call but the few a plain writer makes.
int Filtered(const char* path, long mib);
// Installs a filter that kills the process on the calls a preload makes
// and a plain writer never does, then execs itself as `writers stream FILE
// MIB`: a program started under seccomp.
int Sandboxed(const char* self, const char* path, long mib);
// MIB 1 MiB writes while SIGALRM, every 100 us, lands in a handler that on
// its 300th run (30 ms in, the stream past --min-file) calls exit(0) (how
// "exit") or puts /dev/null in the written descriptor's place (how
// "dup2"): the handler interrupts the writes wherever they are.
int HandlerEnds(const char* path, long mib, const char* how);
// COUNT forged "unseen" records, each naming a file of its own, on the
// descriptor WRITELAB_RUN_FD names: what an unprivileged program can make
// writelab keep.
int ForgeMany(const char* dir, long count);
// COUNT files DIR/sparseI, each ftruncate'd to MIB MiB and never written.
// (All held open for 300 ms, so that the supervisor sees them.)
int Sparse(const char* dir, long count, long mib);
// COUNT files DIR/heldI of MIB MiB each (or as many as its limit on
// descriptors allows), written and all held open for a second; prints
// "held N" on stdout.
int Hold(const char* dir, long count, long mib);
// Two threads writing 4 KiB at random offsets of one descriptor of a file
// of MIB MiB for MS milliseconds; prints "writes N" (both threads') on
// stdout.
int RandomPair(const char* path, long mib, long ms);
// Reads one line of stdin through stdio (a buffer's worth), then fclose:
// the offset of the shared descriptor must stay where the kernel left it
// (a preload's fflush would move it back to the end of the line).
int ReadAndClose();

}  // namespace writers
