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
