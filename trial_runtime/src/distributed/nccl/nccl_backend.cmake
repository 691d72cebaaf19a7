# The nccl backend of ringtrial: built when CMake finds the CUDA toolkit,
# libnccl and nccl.h (CUDA's own folders are searched); otherwise ringtrial
# gets a stub whose ConnectNccl throws ConfigError and NcclAvailable() is
# false. Included by trial_runtime/CMakeLists.txt after ringtrial exists.
#
# The CUDA runtime is linked statically (CUDA::cudart_static), so ringtrial
# needs no libcudart.so at run time; it loads libcuda.so.1 (the driver) only
# when a CUDA call runs, and without a driver those calls report
# cudaErrorInsufficientDriver. libnccl.so.2 is a run-time dependency: it is
# found through an RPATH to its folder even where that folder is not in the
# loader's configuration.
find_package(CUDAToolkit QUIET)
find_library(RING_NCCL_LIBRARY nccl
  HINTS ${CUDAToolkit_LIBRARY_DIR} PATHS /usr/local/cuda/lib /usr/local/cuda/lib64)
find_path(RING_NCCL_INCLUDE_DIR nccl.h
  HINTS ${CUDAToolkit_INCLUDE_DIRS} PATHS /usr/local/cuda/include)

if(CUDAToolkit_FOUND AND RING_NCCL_LIBRARY AND RING_NCCL_INCLUDE_DIR)
  message(STATUS "CUDA ${CUDAToolkit_VERSION} and NCCL (${RING_NCCL_LIBRARY}) found: ringtrial has the nccl backend")
  set(RING_HAVE_NCCL ON CACHE INTERNAL "ringtrial has the nccl backend")
  target_sources(ringtrial PRIVATE
    ${CMAKE_CURRENT_LIST_DIR}/nccl_process_group.cc
    ${CMAKE_CURRENT_LIST_DIR}/nccl_support.cc)
  target_compile_definitions(ringtrial PRIVATE RING_HAVE_NCCL)
  target_include_directories(ringtrial SYSTEM PRIVATE ${RING_NCCL_INCLUDE_DIR})
  target_link_libraries(ringtrial PRIVATE CUDA::cudart_static ${RING_NCCL_LIBRARY})
  get_filename_component(ring_nccl_dir ${RING_NCCL_LIBRARY} DIRECTORY)
  set_property(TARGET ringtrial APPEND PROPERTY INSTALL_RPATH ${ring_nccl_dir})
else()
  message(STATUS "CUDA toolkit or NCCL not found: ringtrial is built without the nccl backend")
  set(RING_HAVE_NCCL OFF CACHE INTERNAL "ringtrial has the nccl backend")
  target_sources(ringtrial PRIVATE ${CMAKE_CURRENT_LIST_DIR}/nccl_unavailable.cc)
endif()
