# Precompiled headers: the third-party headers most files include, parsed
# once per target instead of once per file (g++ spends about 4 s on
# nlohmann/json alone, 2 s on spdlog, 2-5 s on Beast, 2 s on GoogleTest).
# RING_PCH=OFF builds without them, which shows a file that does not include
# what it uses.
option(RING_PCH "Precompile the heavy third-party headers" ON)

set(RING_PCH_JSON
  <algorithm> <chrono> <cstdint> <functional> <map> <memory> <mutex> <optional> <set> <sstream>
  <string> <string_view> <unordered_map> <utility> <vector>
  <nlohmann/json.hpp>)
set(RING_PCH_LOG <spdlog/spdlog.h>)
set(RING_PCH_ASIO  # <utility> above comes first (std::exchange with g++ 12)
  <boost/asio/awaitable.hpp> <boost/asio/co_spawn.hpp> <boost/asio/io_context.hpp>
  <boost/asio/steady_timer.hpp> <boost/asio/strand.hpp> <boost/asio/thread_pool.hpp>
  <boost/asio/use_awaitable.hpp> <boost/beast/core.hpp> <boost/beast/http.hpp>)
set(RING_PCH_TEST <filesystem> <fstream> <thread> <gmock/gmock.h> <gtest/gtest.h>)

# ring_precompile_headers(target [LOG] [ASIO]): the standard headers and
# nlohmann/json, plus spdlog (LOG; the target must link spdlog) and Asio and
# Beast (ASIO; the target must link ring_asio).
function(ring_precompile_headers target)
  if(NOT RING_PCH)
    return()
  endif()
  cmake_parse_arguments(P "LOG;ASIO" "" "" ${ARGN})
  set(headers ${RING_PCH_JSON})
  if(P_LOG)
    list(APPEND headers ${RING_PCH_LOG})
  endif()
  if(P_ASIO)
    list(APPEND headers ${RING_PCH_ASIO})
  endif()
  target_precompile_headers(${target} PRIVATE ${headers})
endfunction()

# ring_shared_precompiled_headers(name [LOG] [ASIO] LIBS lib...): one set of
# precompiled headers for several targets, on an object library of its own
# that links LIBS (so it is compiled with their definitions and options, as
# its users are). A user takes it with ring_reuse_precompiled_headers; g++
# refuses (-Winvalid-pch says so) a header compiled with other options.
function(ring_shared_precompiled_headers name)
  cmake_parse_arguments(P "LOG;ASIO" "" "LIBS" ${ARGN})
  if(NOT RING_PCH)
    return()
  endif()
  set(anchor ${CMAKE_CURRENT_BINARY_DIR}/${name}.cc)
  if(NOT EXISTS ${anchor})
    file(WRITE ${anchor} "// Anchors the precompiled headers of ${name}.\n")
  endif()
  add_library(${name} OBJECT ${anchor})
  # ring_warnings too: -Wpedantic changes what g++ predefines
  # (__cpp_runtime_arrays), and so whether a header compiled without it fits.
  target_link_libraries(${name} PRIVATE ${P_LIBS} ring_warnings)
  set(flags)
  if(P_LOG)
    list(APPEND flags LOG)
  endif()
  if(P_ASIO)
    list(APPEND flags ASIO)
  endif()
  ring_precompile_headers(${name} ${flags})
endfunction()

# ring_reuse_precompiled_headers(target owner): target compiles with owner's
# precompiled headers instead of its own.
function(ring_reuse_precompiled_headers target owner)
  if(RING_PCH)
    target_precompile_headers(${target} REUSE_FROM ${owner})
  endif()
endfunction()
