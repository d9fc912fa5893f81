# libpgwire.pc, twice from src/cmake/libpgwire.pc.in:
#
# - ${PROJECT_BINARY_DIR}/libpgwire.pc describes this build tree: headers
#   from the source tree, libraries where the build put them, so
#   PKG_CONFIG_PATH=<build dir> builds a program against the library without
#   installing it.
# - the installed one, written when `cmake --install` runs (so it names the
#   prefix the install actually uses, --prefix included), describes the
#   installed headers and libraries.
#
# Both say what a static link needs: Requires.private (libuv, OpenSSL, and
# krb5-gssapi when built with GSSAPI) and Libs.private (-lm), which
# `pkg-config --static` adds.
set(PGW_PC_REQUIRES_GSSAPI "")
if(PGW_HAVE_GSSAPI)
  set(PGW_PC_REQUIRES_GSSAPI " krb5-gssapi")
endif()

# Build tree. The library directory is known only at generation time.
set(PGW_PC_PREFIX "${PROJECT_BINARY_DIR}")
set(PGW_PC_LIBDIR "$<TARGET_FILE_DIR:pgwire>")
set(PGW_PC_INCLUDEDIR "${PROJECT_SOURCE_DIR}/include")
configure_file(${PROJECT_SOURCE_DIR}/src/cmake/libpgwire.pc.in
               ${PROJECT_BINARY_DIR}/pkgconfig/libpgwire-build.pc.in @ONLY)
get_property(_pgw_multi_config GLOBAL PROPERTY GENERATOR_IS_MULTI_CONFIG)
if(_pgw_multi_config)
  set(_pgw_build_pc ${PROJECT_BINARY_DIR}/$<CONFIG>/libpgwire.pc) # one per configuration
else()
  set(_pgw_build_pc ${PROJECT_BINARY_DIR}/libpgwire.pc)
endif()
file(GENERATE OUTPUT ${_pgw_build_pc} INPUT ${PROJECT_BINARY_DIR}/pkgconfig/libpgwire-build.pc.in)

# Installed. Relative install directories are written under ${prefix}, as
# pkg-config files usually are; absolute ones as given.
set(PGW_PC_PREFIX "@PGW_PC_INSTALL_PREFIX@")
foreach(kind LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${kind}}")
    set(PGW_PC_${kind} "${CMAKE_INSTALL_${kind}}")
  else()
    set(PGW_PC_${kind} "\${prefix}/${CMAKE_INSTALL_${kind}}")
  endif()
endforeach()
configure_file(${PROJECT_SOURCE_DIR}/src/cmake/libpgwire.pc.in
               ${PROJECT_BINARY_DIR}/pkgconfig/libpgwire-install.pc.in @ONLY)
install(CODE "
  set(PGW_PC_INSTALL_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
  configure_file(\"${PROJECT_BINARY_DIR}/pkgconfig/libpgwire-install.pc.in\"
                 \"${PROJECT_BINARY_DIR}/pkgconfig/libpgwire.pc\" @ONLY)
")
install(FILES ${PROJECT_BINARY_DIR}/pkgconfig/libpgwire.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
