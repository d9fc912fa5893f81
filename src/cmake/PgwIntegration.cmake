# PGW_INTEGRATION: whether ctest runs the integration tests (tests/integration,
# the examples) against the throwaway cluster tests/pg/pg-cluster.sh starts.
#
#   AUTO (default)  ON when a PostgreSQL server can be had: initdb and pg_ctl
#                   where pg-cluster.sh looks for them, or a running server
#                   named by PGHOST and PGPORT; OFF otherwise, with a message.
#                   Decided again at every configure.
#   ON / OFF        forced.
#
# The decision is left in the (normal) variable PGW_INTEGRATION, ON or OFF,
# for the directories below; the cache keeps what the user chose.

# The directory holding initdb and pg_ctl, searched as pg-cluster.sh does:
# PGW_PG_BINDIR alone when set, else the newest /usr/lib/postgresql/*/bin,
# else pg_config --bindir, else PATH. Sets out to the directory or "".
function(pgw_find_pg_bindir out)
  set(dirs)
  if(DEFINED ENV{PGW_PG_BINDIR})
    list(APPEND dirs "$ENV{PGW_PG_BINDIR}")
  else()
    file(GLOB debian LIST_DIRECTORIES true /usr/lib/postgresql/*/bin)
    list(SORT debian COMPARE NATURAL ORDER DESCENDING)
    list(APPEND dirs ${debian})
    find_program(_pgw_pg_config pg_config)
    if(_pgw_pg_config)
      execute_process(COMMAND ${_pgw_pg_config} --bindir OUTPUT_VARIABLE d
                      OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc ERROR_QUIET)
      if(rc EQUAL 0)
        list(APPEND dirs "${d}")
      endif()
    endif()
    find_program(_pgw_initdb_on_path initdb)
    if(_pgw_initdb_on_path)
      get_filename_component(d "${_pgw_initdb_on_path}" DIRECTORY)
      list(APPEND dirs "${d}")
    endif()
    unset(_pgw_pg_config CACHE)
    unset(_pgw_initdb_on_path CACHE)
  endif()
  foreach(d ${dirs})
    if(EXISTS "${d}/initdb" AND EXISTS "${d}/pg_ctl")
      set(${out} "${d}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
  set(${out} "" PARENT_SCOPE)
endfunction()

set(PGW_INTEGRATION AUTO CACHE STRING
    "Integration tests against a throwaway PostgreSQL cluster: AUTO (when a server is found), ON, OFF")
set_property(CACHE PGW_INTEGRATION PROPERTY STRINGS AUTO ON OFF)

if(PGW_BUILD_TESTS)
  pgw_find_pg_bindir(PGW_PG_BINDIR_FOUND)
  set(_pgw_existing_server OFF)
  if(DEFINED ENV{PGHOST} AND DEFINED ENV{PGPORT})
    set(_pgw_existing_server ON)
  endif()
  string(TOUPPER "${PGW_INTEGRATION}" _pgw_integration)
  if(_pgw_integration STREQUAL "AUTO")
    if(PGW_PG_BINDIR_FOUND)
      message(STATUS "PGW_INTEGRATION: ON (PostgreSQL server binaries in ${PGW_PG_BINDIR_FOUND})")
      set(PGW_INTEGRATION ON)
    elseif(_pgw_existing_server)
      message(STATUS "PGW_INTEGRATION: ON (the server at PGHOST=$ENV{PGHOST} PGPORT=$ENV{PGPORT})")
      set(PGW_INTEGRATION ON)
    else()
      message(STATUS "PGW_INTEGRATION: OFF: no PostgreSQL server found (initdb and pg_ctl in "
                     "PGW_PG_BINDIR, /usr/lib/postgresql/*/bin, pg_config --bindir or PATH; or "
                     "PGHOST and PGPORT for a running one). The integration tests and examples "
                     "are not run. Install one (apt-get install postgresql) or force them with "
                     "-DPGW_INTEGRATION=ON.")
      set(PGW_INTEGRATION OFF)
    endif()
  elseif(PGW_INTEGRATION)
    if(NOT PGW_PG_BINDIR_FOUND AND NOT _pgw_existing_server)
      message(WARNING "PGW_INTEGRATION=ON but no PostgreSQL server was found now; the "
                      "integration tests need one when ctest runs (PGW_PG_BINDIR, or PGHOST "
                      "and PGPORT).")
    else()
      message(STATUS "PGW_INTEGRATION: ON (forced)")
    endif()
    set(PGW_INTEGRATION ON)
  else()
    message(STATUS "PGW_INTEGRATION: OFF (forced)")
    set(PGW_INTEGRATION OFF)
  endif()
else()
  set(PGW_INTEGRATION OFF)
endif()
