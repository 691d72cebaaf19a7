# docs/openapi.json, checked with Node.js packages of tests/openapi
# (package.json; deploy/install-deps.sh installs them): swagger-parser
# validates the document against the OpenAPI 3.1 specification, then Ajv
# compiles each of its schemas strictly.
find_program(RING_NODE node)
add_test(NAME openapi_document_test
         COMMAND ${RING_NODE} ${CMAKE_CURRENT_SOURCE_DIR}/openapi/check_document.mjs
                 ${PROJECT_SOURCE_DIR}/docs/openapi.json)
set_tests_properties(openapi_document_test PROPERTIES LABELS unit TIMEOUT 60)
