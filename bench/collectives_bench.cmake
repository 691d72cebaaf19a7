# Collectives benchmarks (included by bench/CMakeLists.txt):
#   collectives_bench  hierarchical (shared memory + Gloo) against plain Gloo, 4 ranks
#   allreduce_sweep    one implementation over 4 KiB..256 MiB, and tensor fusion
#   mpi_allreduce      OpenMPI's MPI_Allreduce over the same sizes (when MPI is found)
# bench/collectives.sh runs them with torch.distributed's peer and writes the tables.
add_library(ring_bench_ranks STATIC ${CMAKE_CURRENT_LIST_DIR}/rank_processes.cc)
target_link_libraries(ring_bench_ranks PRIVATE ring_warnings)

add_executable(collectives_bench ${CMAKE_CURRENT_LIST_DIR}/collectives_bench.cc)
target_link_libraries(collectives_bench PRIVATE ringtrial ring_bench_ranks ring_warnings)
target_compile_definitions(collectives_bench PRIVATE RING_BUILD_TYPE="${CMAKE_BUILD_TYPE}")

find_package(Gloo CONFIG REQUIRED)
add_executable(allreduce_sweep ${CMAKE_CURRENT_LIST_DIR}/allreduce_sweep.cc)
target_link_libraries(allreduce_sweep PRIVATE ringtrial ring_bench_ranks gloo ring_warnings)

find_package(MPI COMPONENTS CXX)
if(MPI_CXX_FOUND)
  add_executable(mpi_allreduce ${CMAKE_CURRENT_LIST_DIR}/mpi_allreduce.cc)
  target_link_libraries(mpi_allreduce PRIVATE MPI::MPI_CXX ring_warnings)
else()
  message(STATUS "MPI not found: bench/mpi_allreduce is not built (Debian: libopenmpi-dev)")
endif()

# One rank of a data-parallel training step with the runtime's
# DistributedModule (libtorch), against torch_train_step.py's DDP.
if(TARGET ringtrial_torch AND TARGET digits_data)
  find_package(Torch REQUIRED)
  add_executable(train_step_bench ${CMAKE_CURRENT_LIST_DIR}/train_step_bench.cc
                                  ${PROJECT_SOURCE_DIR}/examples/digits-libtorch/digits_net.cc)
  target_include_directories(train_step_bench PRIVATE ${PROJECT_SOURCE_DIR}/examples/digits-libtorch)
  target_link_libraries(train_step_bench PRIVATE ringtrial_torch digits_data ring_warnings)
endif()
