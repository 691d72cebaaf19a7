# What `cmake --install` puts beside the binaries, the trial runtime and the
# web UI (their own CMakeLists install those): the systemd units (configured
# with the install prefix), example settings and the documentation.
# The units are written at install time, so they name the prefix actually
# used (`cmake --install build --prefix /opt/ringmaster` included).
foreach(unit ringmaster ringagent)
  set(unit_in ${CMAKE_CURRENT_LIST_DIR}/systemd/${unit}.service.in)
  install(CODE "
    set(unit_out \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/lib/systemd/system/${unit}.service\")
    message(STATUS \"Installing: \${unit_out}\")
    configure_file(\"${unit_in}\" \"\${unit_out}\" @ONLY)")
endforeach()
install(FILES ${PROJECT_SOURCE_DIR}/configs/master.yaml ${PROJECT_SOURCE_DIR}/configs/agent.yaml
        DESTINATION share/ringmaster/examples)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/configs/experiments DESTINATION share/ringmaster/examples)
file(GLOB ring_docs ${PROJECT_SOURCE_DIR}/docs/*.md ${PROJECT_SOURCE_DIR}/docs/openapi.json)
install(FILES ${ring_docs} DESTINATION share/doc/ringmaster)
