# Trial runtime, quadratic example and CLI unit tests (owned by that area).
set(ring_runtime_tests_dir ${CMAKE_CURRENT_LIST_DIR})

ring_add_test(runtime_reporter_test LABEL unit
  SOURCES ${ring_runtime_tests_dir}/runtime_reporter_test.cc
  LIBS ringtrial)

ring_add_test(runtime_context_test LABEL unit
  SOURCES ${ring_runtime_tests_dir}/runtime_context_test.cc
  LIBS ringtrial)

# Exercises the internal HTTP sink (exported by ringtrial, declared in src/).
ring_add_test(runtime_http_sink_test LABEL unit
  SOURCES ${ring_runtime_tests_dir}/runtime_http_sink_test.cc
  LIBS ringtrial)
target_include_directories(runtime_http_sink_test PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/../../trial_runtime/src ${CMAKE_CURRENT_LIST_DIR}/..)

ring_add_test(runtime_quadratic_test LABEL unit
  SOURCES ${ring_runtime_tests_dir}/runtime_quadratic_test.cc)
target_compile_definitions(runtime_quadratic_test PRIVATE QUADRATIC_TRIAL_PATH="$<TARGET_FILE:quadratic_trial>")
target_include_directories(runtime_quadratic_test PRIVATE ${CMAKE_CURRENT_LIST_DIR}/..)
target_link_libraries(runtime_quadratic_test PRIVATE nlohmann_json::nlohmann_json)
add_dependencies(runtime_quadratic_test quadratic_trial)

ring_add_test(cli_table_test LABEL unit
  SOURCES ${ring_runtime_tests_dir}/cli_table_test.cc
  LIBS ring_cli_lib)

ring_add_test(cli_run_test LABEL unit
  SOURCES ${ring_runtime_tests_dir}/cli_run_test.cc
  LIBS ring_cli_lib)
target_include_directories(cli_run_test PRIVATE ${CMAKE_CURRENT_LIST_DIR}/..)

ring_add_test(cli_create_test LABEL unit
  SOURCES ${ring_runtime_tests_dir}/cli_create_test.cc
  LIBS ring_cli_lib LibArchive::LibArchive)
target_include_directories(cli_create_test PRIVATE ${CMAKE_CURRENT_LIST_DIR}/..)

ring_add_test(cli_upload_test LABEL unit
  SOURCES ${ring_runtime_tests_dir}/cli_upload_test.cc
  LIBS ring_cli_lib)
target_include_directories(cli_upload_test PRIVATE ${CMAKE_CURRENT_LIST_DIR}/..)

ring_add_test(runtime_checkpoints_test LABEL unit
  SOURCES ${ring_runtime_tests_dir}/runtime_checkpoints_test.cc
  LIBS ringtrial)
target_include_directories(runtime_checkpoints_test PRIVATE ${CMAKE_CURRENT_LIST_DIR}/..)

ring_add_test(runtime_preemption_test LABEL unit
  SOURCES ${ring_runtime_tests_dir}/runtime_preemption_test.cc
  LIBS ringtrial)
target_include_directories(runtime_preemption_test PRIVATE ${CMAKE_CURRENT_LIST_DIR}/..)

ring_add_test(cli_checkpoint_test LABEL unit
  SOURCES ${ring_runtime_tests_dir}/cli_checkpoint_test.cc
  LIBS ring_cli_lib)
target_include_directories(cli_checkpoint_test PRIVATE ${CMAKE_CURRENT_LIST_DIR}/..)

ring_add_test(runtime_quadratic_resume_test LABEL unit TIMEOUT 180
  SOURCES ${ring_runtime_tests_dir}/runtime_quadratic_resume_test.cc)
target_compile_definitions(runtime_quadratic_resume_test PRIVATE QUADRATIC_TRIAL_PATH="$<TARGET_FILE:quadratic_trial>")
target_include_directories(runtime_quadratic_resume_test PRIVATE ${CMAKE_CURRENT_LIST_DIR}/..)
target_link_libraries(runtime_quadratic_resume_test PRIVATE nlohmann_json::nlohmann_json)
add_dependencies(runtime_quadratic_resume_test quadratic_trial)

ring_add_test(runtime_checkpoint_registration_test LABEL unit
  SOURCES ${ring_runtime_tests_dir}/runtime_checkpoint_registration_test.cc
  LIBS ringtrial)
target_include_directories(runtime_checkpoint_registration_test PRIVATE ${CMAKE_CURRENT_LIST_DIR}/..)

foreach(searcher_test runtime_searcher_test runtime_searcher_failures_test runtime_validation_due_test)
  ring_add_test(${searcher_test} LABEL unit
    SOURCES ${ring_runtime_tests_dir}/${searcher_test}.cc
    LIBS ringtrial)
  target_include_directories(${searcher_test} PRIVATE ${CMAKE_CURRENT_LIST_DIR}/..)
endforeach()

ring_add_test(runtime_quadratic_searcher_test LABEL unit TIMEOUT 180
  SOURCES ${ring_runtime_tests_dir}/runtime_quadratic_searcher_test.cc)
target_compile_definitions(runtime_quadratic_searcher_test PRIVATE QUADRATIC_TRIAL_PATH="$<TARGET_FILE:quadratic_trial>")
target_include_directories(runtime_quadratic_searcher_test PRIVATE ${CMAKE_CURRENT_LIST_DIR}/..)
target_link_libraries(runtime_quadratic_searcher_test PRIVATE nlohmann_json::nlohmann_json)
add_dependencies(runtime_quadratic_searcher_test quadratic_trial)
