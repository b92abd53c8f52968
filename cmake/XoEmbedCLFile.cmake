# cmake -P script run by xo_embed_cl (XoEmbedCL.cmake) at build time:
#   -DXO_IN=<file.cl> -DXO_OUT=<file.c> -DXO_NAME=<identifier>
# Writes a NUL-terminated byte array and its descriptor {name, data, size, hash}.
if(NOT XO_IN OR NOT XO_OUT OR NOT XO_NAME)
  message(FATAL_ERROR "XoEmbedCLFile.cmake: XO_IN, XO_OUT and XO_NAME are required")
endif()
file(READ "${XO_IN}" hex HEX)
file(SHA256 "${XO_IN}" sha)
string(SUBSTRING "${sha}" 0 16 hash)
string(LENGTH "${hex}" hex_len)
math(EXPR size "${hex_len} / 2")

# "3a" -> "0x3a," then a line break every 16 bytes.
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REPEAT "0x[0-9a-f][0-9a-f]," 16 row_pattern)
string(REGEX REPLACE "(${row_pattern})" "\\1\n    " bytes "${bytes}")

file(WRITE "${XO_OUT}.tmp" "/* Generated from ${XO_NAME}.cl by cmake/XoEmbedCLFile.cmake: do not edit. */
#include \"xo_cl_embedded.h\"

static const unsigned char xo__cl_data_${XO_NAME}[${size} + 1] = {
    ${bytes}0x00
};

const xo__cl_source xo__cl_src_${XO_NAME} = {
    \"${XO_NAME}\", xo__cl_data_${XO_NAME}, ${size}, UINT64_C(0x${hash})
};
")
file(RENAME "${XO_OUT}.tmp" "${XO_OUT}")
