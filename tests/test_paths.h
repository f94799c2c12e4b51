// SPDX-License-Identifier: MIT
// Where the build put what the tests run and read. Defined in the build
// directory's generated test_paths.cc (tests/CMakeLists.txt) rather than
// passed as -D flags to every test source, so that those sources compile
// to the same objects in any clone and build directory: a compiler cache
// (scripts/compiler_cache.sh) then serves them to the next clone.
#pragma once

namespace writelab::testing::paths {
extern const char* const kGoldenDir;  // tests/golden (unit tests)
extern const char* const kWritelab;   // the rest: the integration tests'
extern const char* const kExporter;
extern const char* const kWal;
extern const char* const kWriters;
extern const char* const kStaticWriters;
extern const char* const kSplitTracer;  // tests/tools/split_tracer.cc
extern const char* const kTruthLoad;    // tests/tools/truth_load.cc (wl_truth)
extern const char* const kBlameLoad;    // tests/tools/blame_load.cc (wl_blame)
extern const char* const kArtifactDir;
extern const char* const kDocsImgDir;
}  // namespace writelab::testing::paths

#define WRITELAB_GOLDEN_DIR ::writelab::testing::paths::kGoldenDir
#define WRITELAB_BINARY ::writelab::testing::paths::kWritelab
#define WRITELAB_EXPORTER_BINARY ::writelab::testing::paths::kExporter
#define WRITELAB_WAL_BINARY ::writelab::testing::paths::kWal
#define WRITELAB_WRITERS_BINARY ::writelab::testing::paths::kWriters
#define WRITELAB_STATIC_WRITERS_BINARY ::writelab::testing::paths::kStaticWriters
#define WRITELAB_ARTIFACT_DIR ::writelab::testing::paths::kArtifactDir
#define WRITELAB_DOCS_IMG_DIR ::writelab::testing::paths::kDocsImgDir
