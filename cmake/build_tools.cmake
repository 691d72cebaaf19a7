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

# Line tables, not full debug information, in RelWithDebInfo (the default):
# backtraces and profilers still name files and lines, and g++ skips variable
# tracking, about 30% of the compile of the Beast and coroutine files.
# RING_BUILD_TYPE=Debug (deploy/build.sh) gives full debug information.
add_compile_options($<$<AND:$<CONFIG:RelWithDebInfo>,$<COMPILE_LANGUAGE:CXX>>:-g1>)

# Unity builds: a target's sources compiled a few at a time in one
# translation unit, so the headers they share are parsed and their inline
# code generated once per batch instead of once per file (three of the
# end-to-end test files: 28.5 s apart, 13.7 s together). Files that must stay
# alone (each Beast stream file, already one large unit) set
# SKIP_UNITY_BUILD_INCLUSION; the lifecycle, the part changed most, is
# batched four at a time so that touching one file rebuilds a small batch. RING_UNITY=OFF compiles
# every file on its own, which shows a file that leans on its batch-mates.
option(RING_UNITY "Compile each target's sources in batches (unity build)" ON)
set(CMAKE_UNITY_BUILD ${RING_UNITY})
set(CMAKE_UNITY_BUILD_BATCH_SIZE 8)
