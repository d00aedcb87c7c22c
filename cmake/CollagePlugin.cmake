# collage_plugin_module(NAME <target> SOURCES ... [LIBRARIES ...]): a backend plug-in, a
# shared module that `collage --backend-path` (or BackendRegistry::LoadPlugin) loads at run
# time. It is compiled against collage's SDK headers (collage::sdk) and links nothing of
# collage: the process that loads it provides those symbols (the collage executable, or an
# application linking collage::collage). Used by the build tree (cmake/CollageBackend.cmake)
# and installed for plug-ins built out of tree:
#
#   find_package(collage CONFIG REQUIRED)
#   collage_plugin_module(NAME my_backend SOURCES my_backend.cc)
function(collage_plugin_module)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;LIBRARIES" ${ARGN})
  if(NOT ARG_NAME OR NOT ARG_SOURCES)
    message(FATAL_ERROR "collage_plugin_module needs NAME and SOURCES")
  endif()
  # The C interface's module (below), and what the C++ SDK adds: fmt's headers (its error
  # helpers format messages), but no library: the symbols are the loading process's, one
  # copy of each.
  collage_c_plugin_module(NAME ${ARG_NAME} SOURCES ${ARG_SOURCES} LIBRARIES ${ARG_LIBRARIES})
  target_include_directories(${ARG_NAME} PRIVATE
    $<TARGET_PROPERTY:fmt::fmt,INTERFACE_INCLUDE_DIRECTORIES>)
  target_compile_definitions(${ARG_NAME} PRIVATE
    $<TARGET_PROPERTY:fmt::fmt,INTERFACE_COMPILE_DEFINITIONS>)
  target_compile_features(${ARG_NAME} PRIVATE cxx_std_20)
endfunction()

# collage_c_plugin_module(NAME <target> SOURCES ... [LIBRARIES ...]): a backend plug-in
# written against collage's C interface (collage/plugin_c_api.h), in C or in any language the
# project enables: it sees that one header and nothing else of collage, so it may be built by
# another compiler than collage was.
#
#   find_package(collage CONFIG REQUIRED)
#   collage_c_plugin_module(NAME my_backend SOURCES my_backend.c)
function(collage_c_plugin_module)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;LIBRARIES" ${ARGN})
  if(NOT ARG_NAME OR NOT ARG_SOURCES)
    message(FATAL_ERROR "collage_c_plugin_module needs NAME and SOURCES")
  endif()
  add_library(${ARG_NAME} MODULE ${ARG_SOURCES})
  target_include_directories(${ARG_NAME} PRIVATE
    $<TARGET_PROPERTY:collage::sdk,INTERFACE_INCLUDE_DIRECTORIES>)
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_LIBRARIES})
  set_target_properties(${ARG_NAME} PROPERTIES PREFIX "lib" C_VISIBILITY_PRESET hidden)
endfunction()
