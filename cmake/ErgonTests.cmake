# Test discovery: the tier is the folder a test lives in.
#   tests/<tier>/test_*.c   one cmocka executable each, linked with libergon
#   tests/<tier>/test_*.sh  a shell test (bash), run with ERGON_BIN set
# Every test sees ERGON_BIN (the CLI), ERGON_SHARED_DIR (fixtures) and
# ERGON_SOURCE_DIR, and gets the tier as a ctest label.
pkg_check_modules(CMOCKA REQUIRED IMPORTED_TARGET cmocka)

# The fixtures live outside the repository (../shared by default). Without
# them the fixture tests fail with a message naming the path; say so once,
# here, too.
if(NOT EXISTS "${ERGON_SHARED_DIR}/fixtures")
  message(WARNING "ERGON_SHARED_DIR=${ERGON_SHARED_DIR}: no fixtures/ folder there. "
          "Tests that read fixtures will fail naming the missing path; clone the shared "
          "fixtures beside the checkout (../shared) or pass -DERGON_SHARED_DIR=/path/to/shared.")
endif()

# Test helpers shared by all tiers (temporary directories, running the CLI).
file(GLOB ERGON_TEST_SUPPORT CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/support/*.c)
add_library(ergon_test_support STATIC ${ERGON_TEST_SUPPORT})
target_include_directories(ergon_test_support PUBLIC ${CMAKE_SOURCE_DIR}/tests/support
                           ${CMAKE_SOURCE_DIR}/src)
target_link_libraries(ergon_test_support PUBLIC ergon_lib PkgConfig::CMOCKA)

set(_ergon_test_env
    "ERGON_BIN=$<TARGET_FILE:ergon>"
    "ERGON_SHARED_DIR=${ERGON_SHARED_DIR}"
    "ERGON_SOURCE_DIR=${CMAKE_SOURCE_DIR}"
    "ERGON_BUILD_DIR=${CMAKE_BINARY_DIR}"
    # The firmware object cache of every test is the build tree's, never the
    # user's (tests/functional/test_fw_cache.c uses a folder of its own).
    "XDG_CACHE_HOME=${CMAKE_BINARY_DIR}/test-cache"
    "ERGON_NVML_STUB=${CMAKE_BINARY_DIR}/nvml_stub/libnvidia-ml.so.1"
    "ERGON_NVML_STUB_OLD=${CMAKE_BINARY_DIR}/nvml_stub_old/libnvidia-ml.so.1"
    # Terminal output is UTF-8 only when the locale is (ASCII otherwise);
    # tests assert the UTF-8 forms unless they set LC_ALL=C themselves.
    "LC_ALL=C.UTF-8"
    "ASAN_OPTIONS=detect_leaks=1:abort_on_error=0"
    "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")

foreach(tier smoke unit functional security pentest)
  file(GLOB _c_tests CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/${tier}/test_*.c)
  foreach(src ${_c_tests})
    get_filename_component(name ${src} NAME_WE)
    set(exe ${tier}_${name})
    add_executable(${exe} ${src})
    target_link_libraries(${exe} PRIVATE ergon_test_support)
    if(name STREQUAL "test_db_migrate_pg")
      # It drives the server itself (libergon loads libpq only at run time).
      target_link_libraries(${exe} PRIVATE PkgConfig::LIBPQ)
    endif()
    add_test(NAME ${tier}/${name} COMMAND ${exe})
    set_tests_properties(${tier}/${name} PROPERTIES LABELS ${tier}
                         ENVIRONMENT "${_ergon_test_env}" TIMEOUT 300)
  endforeach()
  file(GLOB _sh_tests CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/${tier}/test_*.sh)
  foreach(src ${_sh_tests})
    get_filename_component(name ${src} NAME_WE)
    add_test(NAME ${tier}/${name} COMMAND bash ${src})
    # Exit 77: the test (or a section of it) cannot run here; ctest reports
    # it as skipped, and scripts/test.sh fails on a skip it did not expect.
    set_tests_properties(${tier}/${name} PROPERTIES LABELS ${tier}
                         ENVIRONMENT "${_ergon_test_env}" TIMEOUT 300 SKIP_RETURN_CODE 77)
  endforeach()
endforeach()

# build/sanitizers: passes only in a sanitized build; in a plain build it is
# reported as skipped ("NOT SANITIZED"), so a default `ctest` does not pass
# as if the suite had run under ASan/UBSan. scripts/test.sh fails on it.
add_executable(ergon_sanitizer_probe ${CMAKE_SOURCE_DIR}/tests/support/sanitizer_probe/sanitizer_probe.c)
add_test(NAME build/sanitizers COMMAND ergon_sanitizer_probe)
set_tests_properties(build/sanitizers PROPERTIES LABELS smoke SKIP_RETURN_CODE 77)
if(NOT ERGON_SANITIZE)
  message(STATUS "ergon: tests are built WITHOUT sanitizers (ERGON_SANITIZE=OFF); "
                 "build/sanitizers will report it. scripts/test.sh builds the sanitized suite.")
endif()

# No test is retried, and no test is known-flaky: the two that were
# (test_hw_jetson_method, test_live_gate) now run on a simulated clock and
# on the stream's own clock, with exact expectations (issue 20).
#   ERGON_WALLTIME_TESTS  tests that truly depend on wall-clock time, label
#                         "walltime": scripts/test.sh runs them once, on
#                         their own, and reports them separately (never
#                         retried; a failure fails the run). Each must say
#                         why here. Empty: test_rails_cli (ergon_clock_set),
#                         test_joulescope_bridge (the stub unpaced, on its
#                         sample counter), test_profile_live (unpaced
#                         simulators, the live capture on the packets'
#                         clock) and test_profile_live_ppk2 (the PPK2
#                         simulator unpaced with its gate in stream samples,
#                         the raw capture's grace on the samples' clock) left
#                         it for the main tier (issue 20).
set(ERGON_WALLTIME_TESTS)
foreach(t ${ERGON_WALLTIME_TESTS})
  set_property(TEST ${t} APPEND PROPERTY LABELS walltime)
endforeach()

# Fuzz targets also run as regression tests over their seed corpus in the
# normal test build (sanitized when ERGON_SANITIZE=ON, as scripts/test.sh
# builds it), through a small standalone driver. A replay fails
# when the corpus folder is missing, a seed is unreadable, or it replayed
# fewer seeds than the target's minimum (ERGON_FUZZ_MIN_SEEDS_<name>, set
# here to the seeds committed; 1 for a target not listed).
set(ERGON_FUZZ_MIN_SEEDS_fuzz_artifact 5)
set(ERGON_FUZZ_MIN_SEEDS_fuzz_bridge 7)
set(ERGON_FUZZ_MIN_SEEDS_fuzz_compare 3)
set(ERGON_FUZZ_MIN_SEEDS_fuzz_config 7)
set(ERGON_FUZZ_MIN_SEEDS_fuzz_fw_map 8)
set(ERGON_FUZZ_MIN_SEEDS_fuzz_fw_port 7)
set(ERGON_FUZZ_MIN_SEEDS_fuzz_hpx 8)
set(ERGON_FUZZ_MIN_SEEDS_fuzz_jls 4)
set(ERGON_FUZZ_MIN_SEEDS_fuzz_power_csv 5)
set(ERGON_FUZZ_MIN_SEEDS_fuzz_ppk2_decode 3)
set(ERGON_FUZZ_MIN_SEEDS_fuzz_ppk2_meta 9)
set(ERGON_FUZZ_MIN_SEEDS_fuzz_profile_terminal 3)
set(ERGON_FUZZ_MIN_SEEDS_fuzz_report_html 7)
set(ERGON_FUZZ_MIN_SEEDS_fuzz_run_replay_csv 4)
set(ERGON_FUZZ_MIN_SEEDS_fuzz_run_report 3)
set(ERGON_FUZZ_MIN_SEEDS_fuzz_signature 4)
set(ERGON_FUZZ_MIN_SEEDS_fuzz_sysfs 9)
set(ERGON_FUZZ_MIN_SEEDS_fuzz_target_ina228 4)
set(ERGON_FUZZ_MIN_SEEDS_fuzz_typed_read 8)
set(ERGON_FUZZ_MIN_SEEDS_fuzz_view_serve 10)
set(ERGON_FUZZ_MIN_SEEDS_fuzz_workload_argv 5)
file(GLOB _fuzzers CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/fuzz/fuzz_*.c)
foreach(src ${_fuzzers})
  get_filename_component(name ${src} NAME_WE)
  add_executable(fuzzcorpus_${name} ${src} ${CMAKE_SOURCE_DIR}/tests/fuzz/standalone_main.c)
  target_link_libraries(fuzzcorpus_${name} PRIVATE ergon_lib)
  target_include_directories(fuzzcorpus_${name} PRIVATE ${CMAKE_SOURCE_DIR}/src)
  if(DEFINED ERGON_FUZZ_MIN_SEEDS_${name})
    set(_min ${ERGON_FUZZ_MIN_SEEDS_${name}})
  else()
    set(_min 1)
  endif()
  add_test(NAME fuzz/${name}_corpus
           COMMAND fuzzcorpus_${name} --min-seeds ${_min}
                   ${CMAKE_SOURCE_DIR}/tests/fuzz/corpus/${name})
  set_tests_properties(fuzz/${name}_corpus PROPERTIES LABELS fuzz
                       ENVIRONMENT "${_ergon_test_env}" TIMEOUT 300)
endforeach()
# The replay driver itself: a missing corpus and too few seeds must fail.
add_test(NAME fuzz/replay_fails_on_missing_corpus
         COMMAND fuzzcorpus_fuzz_config ${CMAKE_BINARY_DIR}/no-such-corpus)
add_test(NAME fuzz/replay_fails_below_min_seeds
         COMMAND fuzzcorpus_fuzz_config --min-seeds 1000
                 ${CMAKE_SOURCE_DIR}/tests/fuzz/corpus/fuzz_config)
set_tests_properties(fuzz/replay_fails_on_missing_corpus fuzz/replay_fails_below_min_seeds
                     PROPERTIES LABELS fuzz WILL_FAIL TRUE)

# A stub libnvidia-ml.so.1 for the nvml instrument's tests (found through
# ERGON_NVML_LIB), and an "old driver" variant without the energy counter.
foreach(_v "" _old)
  add_library(ergon_nvml_stub${_v} SHARED ${CMAKE_SOURCE_DIR}/tests/support/nvml_stub/nvml_stub.c)
  set_target_properties(ergon_nvml_stub${_v} PROPERTIES PREFIX "lib" OUTPUT_NAME "nvidia-ml"
                        SUFFIX ".so.1" C_VISIBILITY_PRESET hidden
                        LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/nvml_stub${_v})
  target_compile_options(ergon_nvml_stub${_v} PRIVATE -Wno-conversion)
endforeach()
target_compile_definitions(ergon_nvml_stub_old PRIVATE STUB_OLD=1)

# Test plugins (tests/support/plugins/<name>.c -> <build>/tests/plugins/<name>.so):
# shared objects that break the plugin ABI on purpose.
file(GLOB _test_plugins CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/support/plugins/*.c)
foreach(src ${_test_plugins})
  get_filename_component(name ${src} NAME_WE)
  add_library(testplugin_${name} MODULE ${src})
  target_include_directories(testplugin_${name} PRIVATE ${CMAKE_SOURCE_DIR}/include)
  set_target_properties(testplugin_${name} PROPERTIES C_VISIBILITY_PRESET hidden PREFIX ""
                        OUTPUT_NAME ${name} LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/plugins)
endforeach()

# The PPK2 protocol simulator as a program (shell tests, benchmarks, trying
# the ppk2 driver without a PPK2): <build>/ergon_ppk2_sim.
add_executable(ergon_ppk2_sim ${CMAKE_SOURCE_DIR}/tests/support/ppk2_sim/ppk2_sim_main.c)
target_link_libraries(ergon_ppk2_sim PRIVATE ergon_test_support)

# The reference JLS library's readers against ergon's recordings
# (tests/functional/test_jls_reference_readers.sh): a recording from a known
# synthetic signal through ergon's writer, and the checker that reads a file
# with ../shared/tools/jls-ref and compares with the samples' statistics.
add_executable(ergon_jls_synth ${CMAKE_SOURCE_DIR}/tests/support/jls_synth/jls_synth_main.c)
target_link_libraries(ergon_jls_synth PRIVATE ergon_lib)
add_executable(ergon_jls_ref_check ${CMAKE_SOURCE_DIR}/tests/support/jls_ref_check/jls_ref_check.c)
target_link_libraries(ergon_jls_ref_check PRIVATE m)

# Fault-injection shim (tests/support/faultinj/, docs/RELIABILITY.md): an
# LD_PRELOAD library that fails the Nth allocation or write-side call, at
# <build>/faultinj/libergon_faultinj.so. Built without the sanitizer flags:
# it sits in front of libasan and forwards to it.
add_library(ergon_faultinj MODULE ${CMAKE_SOURCE_DIR}/tests/support/faultinj/faultinj.c)
set_target_properties(ergon_faultinj PROPERTIES PREFIX "lib" OUTPUT_NAME ergon_faultinj
                      LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/faultinj
                      COMPILE_OPTIONS "-Wall;-Wextra;-Werror;-O1;-fno-omit-frame-pointer" LINK_OPTIONS "")
target_link_libraries(ergon_faultinj PRIVATE ${CMAKE_DL_LIBS})
# A program that leaks in libergon on purpose (functional/test_reliab_faultinj_lsan:
# the walks' LeakSanitizer settings still catch ergon's own leaks), built like
# the tests (sanitized in a sanitized build), at <build>/faultinj/ergon_leak_probe.
add_executable(ergon_leak_probe ${CMAKE_SOURCE_DIR}/tests/support/faultinj/leak_probe.c)
target_link_libraries(ergon_leak_probe PRIVATE ergon_lib)
set_target_properties(ergon_leak_probe PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/faultinj)
# They run the command once per counted call from main() (about 640 for
# `ergon run`, 710 for `ergon record`), four at a time on two CPUs.
# Alone: four runs at a time would starve the timing-sensitive tests beside it.
set_tests_properties(functional/test_reliab_faultinj_run PROPERTIES TIMEOUT 1200 RUN_SERIAL TRUE)
set_tests_properties(functional/test_reliab_faultinj_record PROPERTIES TIMEOUT 1200 RUN_SERIAL TRUE)
set_tests_properties(functional/test_reliab_faultinj_verify PROPERTIES TIMEOUT 1200 RUN_SERIAL TRUE)
# Every virtual-bench scenario through `ergon profile` (issue 17 adds rows): minutes on a
# loaded 2-vCPU machine under ASan.
set_tests_properties(functional/test_profile_sim PROPERTIES TIMEOUT 900)
# Every command of README.md and docs/USAGE.md (QEMU firmware builds and runs
# among them): minutes on a loaded 2-vCPU machine under ASan.
set_tests_properties(functional/test_doc_commands PROPERTIES TIMEOUT 1500)
# Reads ergon's recordings (millions of samples) with the reference JLS readers.
set_tests_properties(functional/test_jls_reference_readers PROPERTIES TIMEOUT 900)

# ergon db: the PostgreSQL test exits 77 when no server is given
# (ERGON_PG_URL unset): ctest reports it skipped, never passed.
if(TEST functional/test_db_postgresql)
  set_tests_properties(functional/test_db_postgresql PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900)
endif()

# ergon db schema 3 -> 4 on PostgreSQL: exits 77 without ERGON_PG_URL.
if(TEST functional/test_db_migrate_pg)
  set_tests_properties(functional/test_db_migrate_pg PROPERTIES SKIP_RETURN_CODE 77)
endif()

# ergon validate: seven model profiles under QEMU (firmware builds included).
if(TEST functional/test_validate)
  set_tests_properties(functional/test_validate PROPERTIES TIMEOUT 900)
endif()
# ergon validate on the sim and a faked J-Link board: 13 profiles (150 s under ASan).
if(TEST functional/test_validate_boards)
  set_tests_properties(functional/test_validate_boards PROPERTIES TIMEOUT 900)
endif()
# ergon db disk full: one ingest per write-side call (about 65; 60 s on a
# quiet machine, 700 s on the shared VM at load 30).
if(TEST functional/test_db_diskfull)
  set_tests_properties(functional/test_db_diskfull PROPERTIES TIMEOUT 1200)
endif()

# The interpreter's kernel paths on the four models, on the target runtime
# alone: unit/test_tfl_neon_qemu.sh compares this native build's outputs
# with the same program cross-built for AArch64 and run under qemu-aarch64.
add_executable(ergon_tfl_paths_check ${CMAKE_SOURCE_DIR}/tests/support/tfl_check/tfl_paths_check.c)
target_link_libraries(ergon_tfl_paths_check PRIVATE ert_host)
