# Install rules: `cmake --install BUILD [--prefix DIR]` puts under the prefix
#   bin/ergon                                  the CLI
#   include/ergon/*.h                          the public host API
#   lib/libergon.so.0.x.y (SONAME libergon.so.0), libergon.a
#   lib/pkgconfig/ergon.pc                     pkg-config --cflags --libs ergon
#   lib/cmake/ergon/ergonConfig.cmake (+Version, +Targets)   find_package(ergon)
#   share/ergon-target/                        the target runtime as a source package,
#                                              find_package(ergon-target)
#   share/ergon/bridges/*                      instrument bridge scripts (bridges/*)
#   share/man/man1/ergon.1, ergon-<cmd>.1      generated from --help
#   share/bash-completion/completions/ergon, share/zsh/site-functions/_ergon
# Everything is found by globs: a new bridges/<x>, src/cli/cmd_<x>.c,
# include/ergon/<x>.h or target/src/<x>.c is installed without editing this
# file (docs/internals/install.md).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(ERGON_SOVERSION ${PROJECT_VERSION_MAJOR})
set(_ergon_objs $<TARGET_OBJECTS:ergon_lib>)
if(TARGET ert_host)
  list(APPEND _ergon_objs $<TARGET_OBJECTS:ert_host>)
endif()

# The installed libraries are linked from the objects libergon's in-tree
# static library (ergon_lib, which tests and the CLI use) is made of: nothing
# is compiled twice. The in-tree one leaves ert_host as a separate archive;
# the installed libergon.a carries both, so `-lergon` is enough.
# (libpq is loaded at run time by the PostgreSQL backend, not linked.)
set(_ergon_private_deps PkgConfig::SODIUM PkgConfig::CRYPTO PkgConfig::SQLITE3
    Threads::Threads m ${CMAKE_DL_LIBS})
set(_ergon_pc_requires_private "libsodium libcrypto sqlite3")
if(YAML_FOUND)
  list(APPEND _ergon_private_deps PkgConfig::YAML)
  string(APPEND _ergon_pc_requires_private " yaml-0.1")
endif()
if(SERIALPORT_FOUND)
  list(APPEND _ergon_private_deps PkgConfig::SERIALPORT)
  string(APPEND _ergon_pc_requires_private " libserialport")
endif()
if(MHD_FOUND)
  list(APPEND _ergon_private_deps PkgConfig::MHD)
  string(APPEND _ergon_pc_requires_private " libmicrohttpd")
endif()

# Shared: only what the public headers mark ERGON_API is exported
# (-fvisibility=hidden on every object), and the linker version script
# (cmake/install/ergon.map) tags it with a version node and hides anything
# else that is not ergon_* (the target runtime's ert_* symbols).
add_library(ergon_shared SHARED ${_ergon_objs})
set_target_properties(ergon_shared PROPERTIES
  OUTPUT_NAME ergon EXPORT_NAME ergon
  VERSION ${PROJECT_VERSION} SOVERSION ${ERGON_SOVERSION}
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib
  LINK_DEPENDS ${CMAKE_SOURCE_DIR}/cmake/install/ergon.map)
target_link_options(ergon_shared PRIVATE
  "LINKER:--version-script=${CMAKE_SOURCE_DIR}/cmake/install/ergon.map")
if(NOT ERGON_SANITIZE AND NOT ERGON_FUZZ)
  # Every symbol resolved at link time (sanitizer runtimes are not linked
  # into shared objects, so sanitized builds cannot promise this).
  target_link_options(ergon_shared PRIVATE "LINKER:--no-undefined")
endif()
target_link_libraries(ergon_shared PUBLIC PkgConfig::JANSSON PRIVATE ${_ergon_private_deps})
target_include_directories(ergon_shared INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)

add_library(ergon_static STATIC ${_ergon_objs})
set_target_properties(ergon_static PROPERTIES OUTPUT_NAME ergon EXPORT_NAME ergon_static
  ARCHIVE_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib)
target_link_libraries(ergon_static INTERFACE PkgConfig::JANSSON ${_ergon_private_deps})
target_include_directories(ergon_static INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)

install(TARGETS ergon RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS ergon_shared ergon_static EXPORT ergonTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/include/ergon DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h")
# <ergon/ergon.h> is include/ergon/ergon.h itself, installed with the rest:
# it includes every public header, each of which compiles in strict C11
# against this include folder alone (docs/API.md; scripts/api_symbols.py
# --check fails when it misses a header).

# pkg-config: relocatable (prefix from the .pc file's own place), so
# `cmake --install --prefix ANY` and DESTDIR both work.
file(RELATIVE_PATH _pc_up "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
set(ERGON_PC_PREFIX "\${pcfiledir}/${_pc_up}")
set(ERGON_PC_REQUIRES_PRIVATE "${_ergon_pc_requires_private}")
configure_file(${CMAKE_SOURCE_DIR}/cmake/install/ergon.pc.in ${CMAKE_BINARY_DIR}/install/ergon.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/install/ergon.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# CMake package: ergon::ergon (shared) and ergon::ergon_static.
set(ERGON_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/ergon)
set(ERGON_HAVE_YAML_DEP ${YAML_FOUND})
set(ERGON_HAVE_SERIALPORT_DEP ${SERIALPORT_FOUND})
set(ERGON_HAVE_MHD_DEP ${MHD_FOUND})
install(EXPORT ergonTargets NAMESPACE ergon:: DESTINATION ${ERGON_CMAKE_DIR})
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/install/ergonConfig.cmake.in
  ${CMAKE_BINARY_DIR}/install/ergonConfig.cmake INSTALL_DESTINATION ${ERGON_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/install/ergonConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_BINARY_DIR}/install/ergonConfig.cmake
  ${CMAKE_BINARY_DIR}/install/ergonConfigVersion.cmake DESTINATION ${ERGON_CMAKE_DIR})

# The target runtime as a source package: firmware projects compile it with
# their own cross toolchain (find_package(ergon-target), then link
# ergon-target::runtime or ergon-target::runtime_power).
set(ERGON_TARGET_DIR ${CMAKE_INSTALL_DATADIR}/ergon-target)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/target/include ${CMAKE_SOURCE_DIR}/target/src
  ${CMAKE_SOURCE_DIR}/target/port DESTINATION ${ERGON_TARGET_DIR})
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/install/ergon-targetConfig.cmake.in
  ${CMAKE_BINARY_DIR}/install/ergon-targetConfig.cmake INSTALL_DESTINATION ${ERGON_TARGET_DIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/install/ergon-targetConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion ARCH_INDEPENDENT)
install(FILES ${CMAKE_BINARY_DIR}/install/ergon-targetConfig.cmake
  ${CMAKE_BINARY_DIR}/install/ergon-targetConfigVersion.cmake DESTINATION ${ERGON_TARGET_DIR})

# Bridge scripts (bridges/*): executables that speak the instrument bridge
# protocol (docs/BRIDGE.md).
file(GLOB _ergon_bridges CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/bridges/*)
list(FILTER _ergon_bridges EXCLUDE REGEX "(__pycache__|\\.pyc$|~$)")
foreach(b ${_ergon_bridges})
  if(IS_DIRECTORY ${b})
    install(DIRECTORY ${b} DESTINATION ${CMAKE_INSTALL_DATADIR}/ergon/bridges
      PATTERN "__pycache__" EXCLUDE)
  else()
    install(PROGRAMS ${b} DESTINATION ${CMAKE_INSTALL_DATADIR}/ergon/bridges)
  endif()
endforeach()

# Man pages: ergon(1) and ergon-<cmd>(1), rendered by the CLI itself from
# the text `--help` prints (`ergon __man [CMD]`), so they cannot drift.
set(_ergon_man_pages ${CMAKE_BINARY_DIR}/man/ergon.1)
set(_ergon_man_cmds "")
foreach(f ${ERGON_CLI_CMDS})
  get_filename_component(n ${f} NAME_WE)
  string(REGEX REPLACE "^cmd_" "" n ${n})
  # The command's name is its file name with '-' for '_' (cmd_energy_model.c
  # is `ergon energy-model`); the install test checks that every command has
  # its page.
  string(REPLACE "_" "-" n ${n})
  list(APPEND _ergon_man_cmds ${n})
  list(APPEND _ergon_man_pages ${CMAKE_BINARY_DIR}/man/ergon-${n}.1)
endforeach()
add_custom_command(OUTPUT ${_ergon_man_pages}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/man
  COMMAND $<TARGET_FILE:ergon> __man --out-dir ${CMAKE_BINARY_DIR}/man
  DEPENDS ergon COMMENT "man pages from --help" VERBATIM)
add_custom_target(ergon_man ALL DEPENDS ${_ergon_man_pages})
install(FILES ${_ergon_man_pages} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)

# Shell completion: the scripts ask `ergon __complete` for the subcommands,
# options, boards, scenarios and instruments, so they follow the binary.
install(FILES ${CMAKE_SOURCE_DIR}/completions/ergon.bash
  DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME ergon)
install(FILES ${CMAKE_SOURCE_DIR}/completions/_ergon
  DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/site-functions)
