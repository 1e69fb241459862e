# Embeds the bundle templates (*.in beside this script) in the `lowbit`
# binary: writes OUTPUT, a header with one BundleTemplate per template,
# named after its file (README.md.in -> bundle_templates::README_md), whose
# text is the file's as a raw string literal.
#
#   cmake -DOUTPUT=<header> -P embed.cmake
file(GLOB templates "${CMAKE_CURRENT_LIST_DIR}/*.in")
list(SORT templates)
set(header "// Generated from tools/lowbit/bundle/*.in by embed.cmake: do not edit.
#ifndef LOWBIT_TOOLS_LOWBIT_BUNDLETEMPLATES_H
#define LOWBIT_TOOLS_LOWBIT_BUNDLETEMPLATES_H

#include <string_view>

namespace lowbit::cli::bundle_templates {

struct BundleTemplate {
  std::string_view name; // the file, for error messages
  std::string_view text;
};
")
foreach(path IN LISTS templates)
  get_filename_component(file "${path}" NAME)
  string(REGEX REPLACE "\\.in$" "" symbol "${file}")
  string(MAKE_C_IDENTIFIER "${symbol}" symbol)
  file(READ "${path}" text)
  string(FIND "${text}" ")lowbit_template\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${path}: contains the raw string delimiter )lowbit_template\"")
  endif()
  string(APPEND header "
inline constexpr BundleTemplate ${symbol} = {
    \"${file}\", R\"lowbit_template(${text})lowbit_template\"};
")
endforeach()
string(APPEND header "
} // namespace lowbit::cli::bundle_templates

#endif // LOWBIT_TOOLS_LOWBIT_BUNDLETEMPLATES_H
")
# configure_file leaves the header untouched when its text is the same, so
# that a rerun recompiles nothing.
file(WRITE "${OUTPUT}.tmp" "${header}")
configure_file("${OUTPUT}.tmp" "${OUTPUT}" COPYONLY)
file(REMOVE "${OUTPUT}.tmp")
