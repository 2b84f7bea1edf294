# Instrument bridges (docs/BRIDGE.md): scripts ergon runs as child
# processes. Installed under <datadir>/ergon/bridges; the library looks
# there first and then in the source tree (for a build that is not
# installed).
include(GNUInstallDirs)
set(ERGON_BRIDGE_INSTALL_DIR ${CMAKE_INSTALL_FULL_DATADIR}/ergon/bridges)
target_compile_definitions(ergon_lib PRIVATE
  ERGON_BRIDGE_INSTALL_DIR="${ERGON_BRIDGE_INSTALL_DIR}"
  ERGON_BRIDGE_SOURCE_DIR="${CMAKE_SOURCE_DIR}/bridges")
install(PROGRAMS ${CMAKE_SOURCE_DIR}/bridges/joulescope_bridge.py
        DESTINATION ${CMAKE_INSTALL_DATADIR}/ergon/bridges)
