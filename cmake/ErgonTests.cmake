# Test discovery: the tier is the folder a test lives in.
#   tests/<tier>/test_*.c   one cmocka executable each, linked with libergon
#   tests/<tier>/test_*.sh  a shell test (bash), run with ERGON_BIN set
# Every test sees ERGON_BIN (the CLI), ERGON_SHARED_DIR (fixtures) and
# ERGON_SOURCE_DIR, and gets the tier as a ctest label.
pkg_check_modules(CMOCKA REQUIRED IMPORTED_TARGET cmocka)

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
    "ERGON_NVML_STUB=${CMAKE_BINARY_DIR}/nvml_stub/libnvidia-ml.so.1"
    "ERGON_NVML_STUB_OLD=${CMAKE_BINARY_DIR}/nvml_stub_old/libnvidia-ml.so.1"
    "ASAN_OPTIONS=detect_leaks=1:abort_on_error=0"
    "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")

foreach(tier smoke unit functional security pentest)
  file(GLOB _c_tests CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/${tier}/test_*.c)
  foreach(src ${_c_tests})
    get_filename_component(name ${src} NAME_WE)
    set(exe ${tier}_${name})
    add_executable(${exe} ${src})
    target_link_libraries(${exe} PRIVATE ergon_test_support)
    add_test(NAME ${tier}/${name} COMMAND ${exe})
    set_tests_properties(${tier}/${name} PROPERTIES LABELS ${tier}
                         ENVIRONMENT "${_ergon_test_env}" TIMEOUT 300)
  endforeach()
  file(GLOB _sh_tests CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/${tier}/test_*.sh)
  foreach(src ${_sh_tests})
    get_filename_component(name ${src} NAME_WE)
    add_test(NAME ${tier}/${name} COMMAND bash ${src})
    set_tests_properties(${tier}/${name} PROPERTIES LABELS ${tier}
                         ENVIRONMENT "${_ergon_test_env}" TIMEOUT 300)
  endforeach()
endforeach()

# Fuzz targets also run as regression tests over their seed corpus in the
# normal (sanitized) build, through a small standalone driver.
file(GLOB _fuzzers CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/fuzz/fuzz_*.c)
foreach(src ${_fuzzers})
  get_filename_component(name ${src} NAME_WE)
  add_executable(fuzzcorpus_${name} ${src} ${CMAKE_SOURCE_DIR}/tests/fuzz/standalone_main.c)
  target_link_libraries(fuzzcorpus_${name} PRIVATE ergon_lib)
  target_include_directories(fuzzcorpus_${name} PRIVATE ${CMAKE_SOURCE_DIR}/src)
  add_test(NAME fuzz/${name}_corpus
           COMMAND fuzzcorpus_${name} ${CMAKE_SOURCE_DIR}/tests/fuzz/corpus/${name})
  set_tests_properties(fuzz/${name}_corpus PROPERTIES LABELS fuzz
                       ENVIRONMENT "${_ergon_test_env}" TIMEOUT 300)
endforeach()

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

# ergon db: the PostgreSQL test exits 77 when no server is given
# (ERGON_PG_URL unset): ctest reports it skipped, never passed.
if(TEST functional/test_db_postgresql)
  set_tests_properties(functional/test_db_postgresql PROPERTIES SKIP_RETURN_CODE 77)
endif()
