# Text files embedded in libergon as NUL-terminated C strings: the page
# script and style of `ergon view` (src/pipelines/view/view.js, view.css)
# are kept as files of their own, so that they read as JavaScript and CSS,
# and become `const char NAME[]` at build time.
#
# ergon_embed(TARGET SYMBOL FILE): compile FILE into TARGET as SYMBOL.
function(ergon_embed target sym file)
  set(out ${CMAKE_BINARY_DIR}/generated/embed_${sym}.c)
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DIN=${file} -DOUT=${out} -DSYM=${sym}
            -P ${CMAKE_SOURCE_DIR}/cmake/embed_file.cmake
    DEPENDS ${file} ${CMAKE_SOURCE_DIR}/cmake/embed_file.cmake
    COMMENT "Embedding ${file} as ${sym}"
    VERBATIM)
  target_sources(${target} PRIVATE ${out})
endfunction()
