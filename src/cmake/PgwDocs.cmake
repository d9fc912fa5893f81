# The API reference from the public headers: `cmake --build <dir> --target docs`
# writes <dir>/docs/html/index.html. Defined only when doxygen is found; a
# warning (an undocumented declaration, a broken reference) fails the target.
find_package(Doxygen QUIET)
if(NOT DOXYGEN_FOUND)
  return()
endif()
set(PGW_DOCS_DIR ${PROJECT_BINARY_DIR}/docs)
configure_file(${CMAKE_CURRENT_LIST_DIR}/Doxyfile.in ${PGW_DOCS_DIR}/Doxyfile @ONLY)
file(GLOB PGW_DOCS_HEADERS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/include/pgwire.h
     ${PROJECT_SOURCE_DIR}/include/pgwire/*.h)
# The stamp is written only when doxygen succeeds, so a failed run is
# repeated (and fails again) instead of leaving its output looking current.
add_custom_command(
  OUTPUT ${PGW_DOCS_DIR}/docs.stamp
  COMMAND ${DOXYGEN_EXECUTABLE} ${PGW_DOCS_DIR}/Doxyfile
  COMMAND ${CMAKE_COMMAND} -E touch ${PGW_DOCS_DIR}/docs.stamp
  DEPENDS ${PGW_DOCS_DIR}/Doxyfile ${PGW_DOCS_HEADERS} ${CMAKE_CURRENT_LIST_DIR}/doxygen-filter.awk
  WORKING_DIRECTORY ${PGW_DOCS_DIR}
  COMMENT "Generating the API reference with doxygen"
  VERBATIM)
add_custom_target(docs DEPENDS ${PGW_DOCS_DIR}/docs.stamp)
