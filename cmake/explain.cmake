# SPDX-License-Identifier: MIT
# --explain (src/explain): BPF programs compiled with clang for the BPF
# target against a vmlinux.h that bpftool dumps from this machine's kernel
# BTF (CO-RE relocates them to the kernel they run on), turned into a
# skeleton header by bpftool, and loaded with libbpf. WRITELAB_EXPLAIN=OFF
# builds writelab without them; --explain then says so.
option(WRITELAB_EXPLAIN "Build --explain (needs clang, bpftool, libbpf-dev and kernel BTF)" ON)
target_sources(writelab_core PRIVATE src/explain/explainer_common.cc src/explain/figures.cc
  src/explain/tracer_common.cc src/explain/wait_functions.cc src/explain/split_check.cc)
if(NOT WRITELAB_EXPLAIN)
  target_sources(writelab_core PRIVATE src/explain/explainer_off.cc src/explain/tracer_off.cc)
  return()
endif()

set(WRITELAB_VMLINUX_BTF /sys/kernel/btf/vmlinux CACHE FILEPATH
  "Kernel BTF that vmlinux.h is generated from (CO-RE adapts to the running kernel)")
find_program(WRITELAB_BPF_CLANG NAMES clang clang-16 clang-15 clang-14)
find_program(WRITELAB_BPFTOOL bpftool PATHS /usr/sbin /sbin)
pkg_check_modules(LIBBPF IMPORTED_TARGET libbpf)
if(NOT WRITELAB_BPF_CLANG OR NOT WRITELAB_BPFTOOL OR NOT LIBBPF_FOUND
   OR NOT EXISTS ${WRITELAB_VMLINUX_BTF})
  message(FATAL_ERROR "--explain needs clang, bpftool, libbpf-dev and ${WRITELAB_VMLINUX_BTF} "
    "(clang: '${WRITELAB_BPF_CLANG}', bpftool: '${WRITELAB_BPFTOOL}', libbpf found: "
    "'${LIBBPF_FOUND}'). Run scripts/setup.sh, or configure with -DWRITELAB_EXPLAIN=OFF")
endif()

if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  set(bpf_arch x86)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "aarch64|arm64")
  set(bpf_arch arm64)
else()
  set(bpf_arch ${CMAKE_SYSTEM_PROCESSOR})
endif()
set(gen ${PROJECT_BINARY_DIR}/generated/explain)
set(src ${PROJECT_SOURCE_DIR}/src/explain)
file(MAKE_DIRECTORY ${gen})
add_custom_command(OUTPUT ${gen}/vmlinux.h
  COMMAND sh -c "'${WRITELAB_BPFTOOL}' btf dump file '${WRITELAB_VMLINUX_BTF}' format c > vmlinux.h"
  WORKING_DIRECTORY ${gen} COMMENT "Generating vmlinux.h from ${WRITELAB_VMLINUX_BTF}" VERBATIM)
# -mcpu=v3: the compare-and-swap that splits a call's time (BPF atomics, 5.12).
# Two programs: explain.bpf.c (--explain on an experiment's rows) and
# trace.bpf.c (writelab explain -- CMD), each with its skeleton.
set(WRITELAB_BPF_SKELETONS)
foreach(name IN ITEMS explain trace)
  add_custom_command(OUTPUT ${gen}/${name}.bpf.o
    COMMAND ${WRITELAB_BPF_CLANG} -g -O2 -Wall -Werror -target bpf -mcpu=v3 -D__TARGET_ARCH_${bpf_arch}
            -I${gen} -I${src} ${LIBBPF_CFLAGS} -c ${src}/${name}.bpf.c -o ${name}.bpf.o
    DEPENDS ${src}/${name}.bpf.c ${src}/block.bpf.h ${src}/split.bpf.h ${src}/blame.bpf.h
            ${src}/split_parts.h
            ${src}/explain_counters.h ${src}/trace_counters.h
            ${gen}/vmlinux.h
    WORKING_DIRECTORY ${gen} COMMENT "Compiling the BPF programs of ${name}.bpf.c" VERBATIM)
  add_custom_command(OUTPUT ${gen}/${name}.skel.h
    COMMAND sh -c "'${WRITELAB_BPFTOOL}' gen skeleton ${name}.bpf.o name ${name}_bpf > ${name}.skel.h"
    DEPENDS ${gen}/${name}.bpf.o WORKING_DIRECTORY ${gen}
    COMMENT "Generating the BPF skeleton of ${name}.bpf.c" VERBATIM)
  list(APPEND WRITELAB_BPF_SKELETONS ${gen}/${name}.skel.h)
endforeach()
add_custom_target(writelab_explain_skeleton DEPENDS ${WRITELAB_BPF_SKELETONS})
add_dependencies(writelab_core writelab_explain_skeleton)
target_sources(writelab_core PRIVATE src/explain/explainer_bpf.cc src/explain/tracer_bpf.cc
  src/explain/split_check_bpf.cc)

set_source_files_properties(src/explain/explainer_bpf.cc PROPERTIES
  OBJECT_DEPENDS ${gen}/explain.skel.h)
set_source_files_properties(src/explain/tracer_bpf.cc PROPERTIES
  OBJECT_DEPENDS ${gen}/trace.skel.h)
target_include_directories(writelab_core PRIVATE ${gen})
target_link_libraries(writelab_core PUBLIC PkgConfig::LIBBPF)
