# SPDX-License-Identifier: MIT
# The writelab tool: everything it is made of (writelab_core, which the tests
# and benchmarks link too), the binary and the library's examples.

# Everything the tool is made of, minus main().
file(GLOB WRITELAB_CORE_SOURCES CONFIGURE_DEPENDS
  src/core/*.cc src/io/*.cc src/telemetry/*.cc src/testbed/*.cc src/mpi/*.cc src/report/*.cc
  src/history/*.cc src/command/*.cc src/experiments/*/*.cc src/program/*.cc src/program/*/*.cc
  src/cli/*.cc)
# src/mpi/team_mpi.cc or team_off.cc: cmake/mpi.cmake picks one.
list(FILTER WRITELAB_CORE_SOURCES EXCLUDE REGEX "(_test\\.cc|/main\\.cc|/team_(mpi|off)\\.cc)$")
# The sources that include CLI11 (directly or through the two headers that
# do) come first, next to each other: <CLI/CLI.hpp> costs some 5 CPU-s per
# translation unit to parse, so a unity batch should hold as many of them
# as it can. A source that includes it another way only compiles slower.
set(cli_sources)
foreach(source IN LISTS WRITELAB_CORE_SOURCES)
  file(STRINGS ${source} cli_include LIMIT_COUNT 1
       REGEX "#include [<\"](CLI/CLI\\.hpp|command/wire\\.h|cli/help_format\\.h)[>\"]")
  if(cli_include)
    list(APPEND cli_sources ${source})
  endif()
endforeach()
list(REMOVE_ITEM WRITELAB_CORE_SOURCES ${cli_sources})
list(PREPEND WRITELAB_CORE_SOURCES ${cli_sources})
add_library(writelab_core STATIC ${WRITELAB_CORE_SOURCES})
set_target_properties(writelab_core PROPERTIES UNITY_BUILD ${WRITELAB_UNITY_BUILD})
target_include_directories(writelab_core PUBLIC src)
target_compile_definitions(writelab_core PUBLIC WRITELAB_VERSION="${PROJECT_VERSION}")
target_link_libraries(writelab_core PUBLIC writelab fmt::fmt nlohmann_json::nlohmann_json
  CLI11::CLI11 PkgConfig::URING PkgConfig::MOUNT PkgConfig::BLKID PkgConfig::SQLITE3
  Threads::Threads)

# The HTML report's charting library (third_party/chartjs, in the repository)
# and its glue script, embedded into the binary so that `writelab report`
# needs nothing beside it at run time.
set(WRITELAB_CHART_JS ${PROJECT_SOURCE_DIR}/third_party/chartjs/chart.umd.min.js)
if(NOT EXISTS ${WRITELAB_CHART_JS})
  message(FATAL_ERROR "${WRITELAB_CHART_JS} is missing: the HTML report needs Chart.js "
    "(third_party/chartjs/README.md says where it comes from)")
endif()
set(WRITELAB_EMBEDDED_SOURCES)
foreach(asset IN ITEMS "chart_js|${WRITELAB_CHART_JS}" "report_js|${PROJECT_SOURCE_DIR}/web/report.js")
  string(REPLACE "|" ";" asset "${asset}")
  list(GET asset 0 symbol)
  list(GET asset 1 input)
  set(output ${PROJECT_BINARY_DIR}/generated/embedded_${symbol}.cc)
  add_custom_command(OUTPUT ${output}
    COMMAND ${CMAKE_COMMAND} -DINPUT=${input} -DOUTPUT=${output} -DSYMBOL=${symbol}
            -P ${PROJECT_SOURCE_DIR}/cmake/embed_file.cmake
    DEPENDS ${input} ${PROJECT_SOURCE_DIR}/cmake/embed_file.cmake
    COMMENT "Embedding ${input}")
  list(APPEND WRITELAB_EMBEDDED_SOURCES ${output})
endforeach()
target_sources(writelab_core PRIVATE ${WRITELAB_EMBEDDED_SOURCES})

add_executable(writelab_cli src/cli/main.cc)
set_target_properties(writelab_cli PROPERTIES OUTPUT_NAME writelab)
target_link_libraries(writelab_cli PRIVATE writelab_core)
# With debug information (RelWithDebInfo), it goes to writelab.debug beside
# the binary, which gdb finds through .gnu_debuglink: a 3 MB writelab
# instead of a 68 MB one.
if(CMAKE_BUILD_TYPE STREQUAL "RelWithDebInfo" AND CMAKE_OBJCOPY)
  add_custom_command(TARGET writelab_cli POST_BUILD
    COMMAND ${CMAKE_OBJCOPY} --only-keep-debug $<TARGET_FILE:writelab_cli>
            $<TARGET_FILE:writelab_cli>.debug
    COMMAND ${CMAKE_OBJCOPY} --strip-debug --add-gnu-debuglink=$<TARGET_FILE:writelab_cli>.debug
            $<TARGET_FILE:writelab_cli>
    VERBATIM)
endif()

add_executable(stream_exporter examples/stream_exporter.cc)
target_link_libraries(stream_exporter PRIVATE writelab)
add_executable(wal_example examples/wal.cc)
target_link_libraries(wal_example PRIVATE writelab)


# libwritelab-run.so, which `writelab run` preloads into the commands it
# runs (src/shim/run_shim.cc): the window of src/lib compiled in, nothing
# of C++'s run time (no exceptions, no thread-safe statics), so that it
# adds only libc to a process. The binary finds it beside itself in the
# build tree, then where it is installed.
add_library(writelab_run_shim MODULE src/shim/run_shim.cc src/shim/stream.cc src/shim/direct.cc src/shim/report.cc
  src/lib/writeback_window.cc src/lib/paced_window.cc)
set_target_properties(writelab_run_shim PROPERTIES OUTPUT_NAME writelab-run PREFIX lib
  LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR} LINKER_LANGUAGE C)
target_include_directories(writelab_run_shim PRIVATE src include)
target_compile_options(writelab_run_shim PRIVATE -fno-exceptions -fno-rtti -fno-threadsafe-statics
  -fvisibility=hidden -fvisibility-inlines-hidden)
target_link_libraries(writelab_run_shim PRIVATE ${CMAKE_DL_LIBS})
target_link_options(writelab_run_shim PRIVATE -Wl,-z,defs)
add_dependencies(writelab_cli writelab_run_shim)
file(RELATIVE_PATH WRITELAB_SHIM_RELATIVE ${CMAKE_INSTALL_FULL_BINDIR}
  ${CMAKE_INSTALL_FULL_LIBDIR}/writelab/libwritelab-run.so)
target_compile_definitions(writelab_core PUBLIC
  WRITELAB_SHIM_INSTALLED="${CMAKE_INSTALL_FULL_LIBDIR}/writelab/libwritelab-run.so"
  WRITELAB_SHIM_RELATIVE="${WRITELAB_SHIM_RELATIVE}")
