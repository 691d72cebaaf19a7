# docs/openapi.json, checked with Node.js packages of tests/openapi
# (package.json; deploy/install-deps.sh installs them):
# - the document itself: swagger-parser validates it against the OpenAPI 3.1
#   specification, then Ajv compiles each of its schemas strictly;
# - the master's answers in every test with a TestCluster (integration, e2e):
#   tests/support/api_answers.h records them and, when the test ends, Ajv
#   checks each against its operation's response (check_answers.mjs);
#   api_answers_test checks that answers the document does not describe fail.

find_program(RING_NODE node)
add_test(NAME openapi_document_test
         COMMAND ${RING_NODE} ${CMAKE_CURRENT_SOURCE_DIR}/openapi/check_document.mjs
                 ${PROJECT_SOURCE_DIR}/docs/openapi.json)
set_tests_properties(openapi_document_test PROPERTIES LABELS unit TIMEOUT 60)

ring_add_test(api_answers_test LABEL unit SOURCES openapi/api_answers_test.cc LIBS ring_test_support)
