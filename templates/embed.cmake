# Turns the files of a directory into a C table of embedded texts:
#   const ShortcTemplate shortc_templates[] = {{"norm.cuh", "...", len}, ...};
#   const int shortc_ntemplates = N;
# Run as: cmake -DOUT=file.c -DDIR=templates [-DGLOB=*.cuh] [-DTABLE=shortc_templates]
#               [-DCOUNT=shortc_ntemplates] -P embed.cmake
# Used for templates/*.cuh (the compiler) and runtime/sim/shortsim_*.h (the
# simulator's headers: TABLE=shortsim_headers, COUNT=shortsim_nheaders).
if(NOT GLOB)
  set(GLOB "*.cuh")
endif()
if(NOT TABLE)
  set(TABLE shortc_templates)
endif()
if(NOT COUNT)
  set(COUNT shortc_ntemplates)
endif()
file(GLOB files RELATIVE ${DIR} ${DIR}/${GLOB})
list(SORT files)
set(body "/* Generated from ${GLOB} by templates/embed.cmake; do not edit. */\n#include <stddef.h>\n")
string(APPEND body "typedef struct ShortcTemplate { const char *name; const char *text; size_t len; } ShortcTemplate;\n")
set(table "")
set(i 0)
foreach(f ${files})
  file(READ ${DIR}/${f} hex HEX)
  string(LENGTH "${hex}" hexlen)
  math(EXPR nbytes "${hexlen} / 2")
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," arr "${hex}")
  string(APPEND body "static const char tmpl_${i}[] = {${arr}0};\n")
  string(APPEND table "  {\"${f}\", tmpl_${i}, ${nbytes}},\n")
  math(EXPR i "${i} + 1")
endforeach()
string(APPEND body "const ShortcTemplate ${TABLE}[] = {\n${table}  {NULL, NULL, 0}\n};\n")
string(APPEND body "const int ${COUNT} = ${i};\n")
file(WRITE ${OUT}.tmp "${body}")
file(RENAME ${OUT}.tmp ${OUT})
