# Script mode (cmake -P): writes OUTPUT, a C++ file defining
# `std::string_view ring::NAME()` that returns the text of INPUT (used for
# docs/openapi.json, which the master serves as it is in the repository).
cmake_minimum_required(VERSION 3.25)
if(NOT DEFINED INPUT OR NOT DEFINED OUTPUT OR NOT DEFINED NAME)
  message(FATAL_ERROR "embed_text.cmake needs -DINPUT=file -DOUTPUT=file.cc -DNAME=function")
endif()
file(READ "${INPUT}" text)
set(delim "ringtext")
string(FIND "${text}" ")${delim}\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} contains the raw string delimiter )${delim}\"")
endif()
file(WRITE "${OUTPUT}.tmp"
  "// Generated from ${INPUT} by embed_text.cmake; do not edit.\n"
  "#include <string_view>\n\nnamespace ring {\n\n"
  "std::string_view ${NAME}() {\n  static constexpr std::string_view kText = R\"${delim}(${text})${delim}\";\n"
  "  return kText;\n}\n\n}  // namespace ring\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
