# cmake -DIN=FILE -DOUT=FILE.c -DSYM=NAME -P embed_file.cmake: FILE's bytes
# as `const unsigned char NAME[]` (NUL-terminated) in FILE.c (cmake/ErgonEmbed.cmake).
file(READ ${IN} hex HEX)
string(LENGTH "${hex}" n)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
# Break the lines every 16 bytes so that compilers and editors stay happy.
string(REGEX REPLACE "((0x..,){16})" "\\1\n" body "${body}")
file(WRITE ${OUT} "/* Generated from ${IN} by cmake/embed_file.cmake; do not edit. */\n"
                  "extern const unsigned char ${SYM}[];\n"
                  "const unsigned char ${SYM}[] = {\n${body}0x00};\n")
