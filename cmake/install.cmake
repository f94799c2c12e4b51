# SPDX-License-Identifier: MIT
# What `cmake --install` puts where, and the .deb (`cpack -G DEB`):
#   lib/libwritelab.a (and .so with WRITELAB_SHARED), include/writelab/,
#   lib/cmake/writelab/ (find_package), lib/pkgconfig/writelab.pc;
#   with the tool: bin/writelab, lib/writelab/libwritelab-run.so (`writelab
#   run`'s preload), share/man/man1/writelab.1,
#   share/bash-completion/completions/writelab, share/zsh/site-functions/
#   _writelab, share/fish/vendor_completions.d/writelab.fish,
#   share/doc/writelab/.
include(CMakePackageConfigHelpers)

# Not CMAKE_INSTALL_DOCDIR: as a subproject that would be the parent's.
set(WRITELAB_DOC_DIR ${CMAKE_INSTALL_DATAROOTDIR}/doc/writelab)

set(WRITELAB_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/writelab)
install(TARGETS ${WRITELAB_LIBRARY_TARGETS} EXPORT writelabTargets COMPONENT library
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/writelab DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT library)
install(EXPORT writelabTargets NAMESPACE writelab:: DESTINATION ${WRITELAB_CMAKE_DIR}
  COMPONENT library)
configure_package_config_file(cmake/writelabConfig.cmake.in
  ${PROJECT_BINARY_DIR}/writelabConfig.cmake INSTALL_DESTINATION ${WRITELAB_CMAKE_DIR})
# 0.x: a new minor version may change the API, so only the same minor matches.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/writelabConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/writelabConfig.cmake
  ${PROJECT_BINARY_DIR}/writelabConfigVersion.cmake DESTINATION ${WRITELAB_CMAKE_DIR}
  COMPONENT library)
file(RELATIVE_PATH WRITELAB_PC_TO_PREFIX ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig
  ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" WRITELAB_PC_TO_PREFIX "${WRITELAB_PC_TO_PREFIX}")
configure_file(cmake/writelab.pc.in ${PROJECT_BINARY_DIR}/writelab.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/writelab.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig
  COMPONENT library)
install(FILES LICENSE README.md DESTINATION ${WRITELAB_DOC_DIR} COMPONENT library)

if(NOT WRITELAB_BUILD_TOOL OR NOT PROJECT_IS_TOP_LEVEL)
  return()
endif()

install(TARGETS writelab_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT tool)
install(TARGETS writelab_run_shim LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/writelab COMPONENT tool)
install(FILES completion/writelab.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
  RENAME writelab COMPONENT tool)
# zsh and fish: thin wrappers that run the bash completion through bash,
# found relative to where these land (../../bash-completion/completions).
install(FILES completion/_writelab DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/site-functions
  COMPONENT tool)
install(FILES completion/writelab.fish DESTINATION ${CMAKE_INSTALL_DATADIR}/fish/vendor_completions.d
  COMPONENT tool)
install(DIRECTORY docs/ DESTINATION ${WRITELAB_DOC_DIR}/docs COMPONENT tool)
install(FILES third_party/chartjs/LICENSE.md DESTINATION ${WRITELAB_DOC_DIR}/third_party
  RENAME LICENSE-chartjs.md COMPONENT tool)
install(FILES third_party/chartjs/LICENSE-kurkle-color.md
  DESTINATION ${WRITELAB_DOC_DIR}/third_party COMPONENT tool)

if(WRITELAB_MAN)
  find_program(HELP2MAN help2man)
  if(NOT HELP2MAN)
    message(FATAL_ERROR "help2man is missing: the writelab(1) man page is made with it. "
      "Run scripts/setup.sh, or configure with -DWRITELAB_MAN=OFF")
  endif()
  set(WRITELAB_MAN_PAGE ${PROJECT_BINARY_DIR}/writelab.1)
  add_custom_command(OUTPUT ${WRITELAB_MAN_PAGE}
    COMMAND ${CMAKE_COMMAND} -DWRITELAB=$<TARGET_FILE:writelab_cli> -DHELP2MAN=${HELP2MAN}
            -DOUTPUT=${WRITELAB_MAN_PAGE} -P ${PROJECT_SOURCE_DIR}/cmake/man_page.cmake
    DEPENDS writelab_cli ${PROJECT_SOURCE_DIR}/cmake/man_page.cmake
    COMMENT "Generating writelab(1) from the commands' help")
  add_custom_target(writelab_man ALL DEPENDS ${WRITELAB_MAN_PAGE})
  install(FILES ${WRITELAB_MAN_PAGE} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT tool)
endif()

# cpack -G DEB: one package with the tool and the library, its run-time
# dependencies found by dpkg-shlibdeps; the binary stripped.
set(CPACK_PACKAGE_NAME writelab)
set(CPACK_PACKAGE_VENDOR writelab)
set(CPACK_PACKAGE_CONTACT "writelab developers <writelab@users.noreply.github.com>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "e2fsprogs, xfsprogs, btrfs-progs, util-linux")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "${PROJECT_DESCRIPTION}
 writelab reproduces five classic Linux write experiments (streaming writes,
 fsync under background writers, small records, preallocation, strided
 direct writes) on your kernel, file system and device, and ships the
 winning strategies as a C++ library (StreamWriter, RecordWriter).")
include(CPack)
