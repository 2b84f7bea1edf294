# libFuzzer targets: tests/fuzz/fuzz_<name>.c define LLVMFuzzerTestOneInput.
# Configure a separate build: CC=clang cmake -DERGON_FUZZ=ON -DERGON_TESTS=OFF
# (scripts/fuzz.sh does this and runs each target for a given time).
# The streaming JSON reader's window (256 KiB) shrunk to 61 bytes, so that a
# fuzzer's inputs cross window edges at every offset (issue 30: a string
# across the edge was refused, and no input under 256 KiB could show it).
target_compile_definitions(ergon_lib PRIVATE ERGON_JCS_RD_WINDOW=61)
file(GLOB _fuzzers CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/fuzz/fuzz_*.c)
foreach(src ${_fuzzers})
  get_filename_component(name ${src} NAME_WE)
  add_executable(${name} ${src})
  target_include_directories(${name} PRIVATE ${CMAKE_SOURCE_DIR}/src)
  target_link_options(${name} PRIVATE -fsanitize=fuzzer)
  target_link_libraries(${name} PRIVATE ergon_lib)
endforeach()
