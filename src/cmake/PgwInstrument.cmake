# Sanitizer (PGW_SANITIZE) and libFuzzer (PGW_FUZZ) instrumentation, applied
# per target to this project's own targets only: nothing here sets
# CMAKE_C_FLAGS or directory-wide options, so a parent project that pulls
# libpgwire in with add_subdirectory compiles its own code as it chose.
#
# What does cross to a target that links the library is the link option:
# an instrumented library cannot be linked without its sanitizer runtimes.

set(PGW_INSTRUMENT_COMPILE)
set(PGW_INSTRUMENT_LINK)
if(PGW_SANITIZE)
  list(APPEND PGW_INSTRUMENT_COMPILE -fsanitize=address,undefined -fno-omit-frame-pointer
       -fno-sanitize-recover=undefined)
  list(APPEND PGW_INSTRUMENT_LINK -fsanitize=address,undefined)
endif()
if(PGW_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "PGW_FUZZ requires clang (CC=clang)")
  endif()
  list(APPEND PGW_INSTRUMENT_COMPILE -fsanitize=fuzzer-no-link,address,undefined
       -fno-omit-frame-pointer)
  list(APPEND PGW_INSTRUMENT_LINK -fsanitize=address,undefined)
endif()
list(REMOVE_DUPLICATES PGW_INSTRUMENT_LINK)

# Instrument target t's own compilation and link.
function(pgw_instrument t)
  if(PGW_INSTRUMENT_COMPILE)
    target_compile_options(${t} PRIVATE ${PGW_INSTRUMENT_COMPILE})
  endif()
  get_target_property(type ${t} TYPE)
  if(PGW_INSTRUMENT_LINK AND NOT type STREQUAL "OBJECT_LIBRARY")
    target_link_options(${t} PRIVATE ${PGW_INSTRUMENT_LINK})
  endif()
endfunction()

# A library target: instrumented itself, and whatever links it in this build
# tree links the runtimes too (not recorded in the installed package).
function(pgw_instrument_library t)
  pgw_instrument(${t})
  if(PGW_INSTRUMENT_LINK)
    target_link_options(${t} INTERFACE "$<BUILD_INTERFACE:${PGW_INSTRUMENT_LINK}>")
  endif()
endfunction()

# Every executable and library defined in directory dir and below (tests/,
# examples/, bench/: the project's own programs), after add_subdirectory.
function(pgw_instrument_directory dir)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(t ${targets})
    get_target_property(type ${t} TYPE)
    if(type MATCHES "^(EXECUTABLE|STATIC_LIBRARY|SHARED_LIBRARY|MODULE_LIBRARY|OBJECT_LIBRARY)$")
      pgw_instrument(${t})
    endif()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(d ${subdirs})
    pgw_instrument_directory(${d})
  endforeach()
endfunction()
