# libFuzzer targets: tests/fuzz/fuzz_<name>.c define LLVMFuzzerTestOneInput.
# Configure a separate build: CC=clang cmake -DERGON_FUZZ=ON -DERGON_TESTS=OFF
# (scripts/fuzz.sh does this and runs each target for a given time).
file(GLOB _fuzzers CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/fuzz/fuzz_*.c)
foreach(src ${_fuzzers})
  get_filename_component(name ${src} NAME_WE)
  add_executable(${name} ${src})
  target_include_directories(${name} PRIVATE ${CMAKE_SOURCE_DIR}/src)
  target_link_options(${name} PRIVATE -fsanitize=fuzzer)
  target_link_libraries(${name} PRIVATE ergon_lib)
endforeach()
