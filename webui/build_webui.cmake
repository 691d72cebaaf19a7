# Runs `npm run build` for the web UI (called by webui/CMakeLists.txt with
# -DNPM -DNODE -DSOURCE_DIR -DOUT_DIR), after checking that Node and the npm
# packages are there, so a missing step names its fix.
set(fix "run ./deploy/install-deps.sh (it installs Node's packages with npm ci in webui/)")
if(NOT NPM OR NOT NODE)
  message(FATAL_ERROR "web UI: node and npm are not installed; ${fix}")
endif()
if(NOT EXISTS ${SOURCE_DIR}/node_modules/.package-lock.json)
  message(FATAL_ERROR "web UI: ${SOURCE_DIR}/node_modules is missing; ${fix}")
endif()
# deploy/install-deps.sh records the lock file it installed from.
set(stamp ${SOURCE_DIR}/node_modules/.ring-package-lock.sha256)
if(EXISTS ${stamp})
  file(READ ${stamp} installed)
  string(STRIP "${installed}" installed)
  file(SHA256 ${SOURCE_DIR}/package-lock.json wanted)
  if(NOT installed STREQUAL wanted)
    message(FATAL_ERROR "web UI: webui/package-lock.json changed since the packages were installed; ${fix}")
  endif()
endif()
# OUT_DIR is also CMake's binary folder of webui/: replace the assets of the
# last build, leave the rest.
file(REMOVE_RECURSE ${OUT_DIR}/assets)
execute_process(
  COMMAND ${NPM} run --silent build -- --outDir ${OUT_DIR} --emptyOutDir=false
  WORKING_DIRECTORY ${SOURCE_DIR}
  RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "web UI: npm run build failed (${result})")
endif()
