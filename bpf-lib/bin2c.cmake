# bin2c.cmake — cmake -DIN=file -DOUT=file.c -DSYM=name -P bin2c.cmake: writes the bytes of IN as
# `const unsigned char SYM[]` and `const unsigned long SYM_len` (see dt_walker_obj.h).
file(READ ${IN} hex HEX)
string(LENGTH "${hex}" n)
math(EXPR len "${n} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
string(REGEX REPLACE "((0x..,){16})" "\\1\n" body "${body}")
file(WRITE ${OUT} "/* generated from ${IN} by bpf-lib/bin2c.cmake */\n"
  "const unsigned char ${SYM}[] __attribute__((aligned(8))) = {\n${body}\n};\n"
  "const unsigned long ${SYM}_len = ${len};\n")
