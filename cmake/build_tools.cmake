# Faster builds with what the machine has, no configuration of its own needed.
include(CheckLinkerFlag)

# ccache, when installed: its settings travel with the command line, so a
# fresh machine and a second clone hit the cache as they are. Paths under
# the source tree are hashed relative to it and the build directory is not
# hashed, so two clones share their entries; the sloppiness lets compilations
# that use a precompiled header be cached (ccache's manual, "Precompiled
# headers"). CCACHE_DISABLE=1 in the environment still turns it off.
find_program(CCACHE_PROGRAM ccache)
if(CCACHE_PROGRAM)
  set(CMAKE_CXX_COMPILER_LAUNCHER
    ${CMAKE_COMMAND} -E env
    CCACHE_BASEDIR=${PROJECT_SOURCE_DIR}
    CCACHE_NOHASHDIR=1
    CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
    ${CCACHE_PROGRAM})
endif()

# A faster linker than GNU ld when one is installed (Debian: mold, lld):
# relinking the executables that use a library is most of an incremental
# build. RING_LINKER names one (or "default" for the compiler's own).
set(RING_LINKER "" CACHE STRING "Linker for -fuse-ld= (empty: mold, else lld, when installed)")
if(RING_LINKER STREQUAL "")
  foreach(linker mold lld)
    check_linker_flag(CXX -fuse-ld=${linker} RING_HAVE_LINKER_${linker})
    if(RING_HAVE_LINKER_${linker})
      set(RING_LINKER ${linker})
      break()
    endif()
  endforeach()
endif()
if(RING_LINKER AND NOT RING_LINKER STREQUAL "default")
  add_link_options(-fuse-ld=${RING_LINKER})
endif()
