# The library is built as one static library per layer, linked as a DAG:
#
#   util <- ir <- ops <- onnx
#                  ops <- pattern <- backend <- backends (backends/*, src/builtin)
#                                    backend <- runtime <- cost <- search <- session <- report
#                  ops <- zoo                  onnx <- cost, backends <- session, zoo <- session
#
# (the table in docs/architecture.md says what each holds).
# A layer's code may include its own headers and those of the layers below it, nothing
# above. The include directories cannot say that (every layer's headers are found as
# "layer/file.h" under src/), so cmake/check_layers.cmake reads every #include and the
# build fails on an edge that goes up: at configure time and again whenever a source
# changes (the collage_layer_check target, which every layer depends on).
#
#   collage_add_layer(NAME ops SOURCE_DIRS src/ops HEADERS ... DEPENDS ir)
#
# adds collage_<name> from the .cc files under SOURCE_DIRS (recursively), linked PUBLIC to
# the collage_<dep> of DEPENDS, and records the layer for the check. HEADERS names public
# headers (under include/) that belong to the layer; CHECK_DIRS folders whose code belongs to
# the layer but is compiled elsewhere (backends/: one object library per backend).

function(collage_add_layer)
  cmake_parse_arguments(ARG "" "NAME" "SOURCE_DIRS;CHECK_DIRS;HEADERS;DEPENDS;EXTRA_SOURCES" ${ARGN})
  set(sources ${ARG_EXTRA_SOURCES})
  foreach(dir IN LISTS ARG_SOURCE_DIRS)
    file(GLOB_RECURSE dir_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/${dir}/*.cc)
    list(APPEND sources ${dir_sources})
  endforeach()
  # Only for executables (src/runtime/thread_policy_preinit.cc says why): each one links it.
  list(FILTER sources EXCLUDE REGEX "/thread_policy_preinit\\.cc$")
  # Compiled once per instruction set by collage_add_sgemm_variants (the ops layer).
  list(FILTER sources EXCLUDE REGEX "/sgemm_variant\\.cc$")
  set(target collage_${ARG_NAME})
  add_library(${target} STATIC ${sources})
  target_include_directories(${target} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/src>)
  foreach(dep IN LISTS ARG_DEPENDS)
    target_link_libraries(${target} PUBLIC collage_${dep})
  endforeach()
  add_dependencies(${target} collage_layer_check)
  # One line per layer for the checker: name|source dirs|public headers|direct dependencies.
  string(REPLACE ";" "," dirs "${ARG_SOURCE_DIRS};${ARG_CHECK_DIRS}")
  string(REPLACE ";" "," headers "${ARG_HEADERS}")
  string(REPLACE ";" "," deps "${ARG_DEPENDS}")
  set_property(GLOBAL APPEND_STRING PROPERTY COLLAGE_LAYER_TABLE
               "${ARG_NAME}|${dirs}|${headers}|${deps}\n")
  set_property(GLOBAL APPEND PROPERTY COLLAGE_LAYER_TARGETS ${target})
endfunction()

# After the last collage_add_layer: writes the table, checks once now (configure fails on an
# upward include) and adds the target that checks again when a source changes.
function(collage_check_layers)
  set(table ${CMAKE_BINARY_DIR}/generated/layers.txt)
  get_property(layer_table GLOBAL PROPERTY COLLAGE_LAYER_TABLE)
  file(WRITE ${table}.tmp "${layer_table}")
  file(COPY_FILE ${table}.tmp ${table} ONLY_IF_DIFFERENT)
  execute_process(
    COMMAND ${CMAKE_COMMAND} -DROOT=${PROJECT_SOURCE_DIR} -DTABLE=${table}
            -P ${PROJECT_SOURCE_DIR}/cmake/check_layers.cmake
    RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "${out}")
  endif()
  set(checked_sources "")
  foreach(dir src include backends tools/collage)
    file(GLOB_RECURSE dir_files CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/${dir}/*.cc
         ${PROJECT_SOURCE_DIR}/${dir}/*.h)
    list(APPEND checked_sources ${dir_files})
  endforeach()
  set(stamp ${CMAKE_BINARY_DIR}/generated/layers.checked)
  add_custom_command(
    OUTPUT ${stamp}
    COMMAND ${CMAKE_COMMAND} -DROOT=${PROJECT_SOURCE_DIR} -DTABLE=${table}
            -P ${PROJECT_SOURCE_DIR}/cmake/check_layers.cmake
    COMMAND ${CMAKE_COMMAND} -E touch ${stamp}
    DEPENDS ${checked_sources} ${table} ${PROJECT_SOURCE_DIR}/cmake/check_layers.cmake
    COMMENT "Checking that no layer includes a layer above it")
  add_custom_target(collage_layer_check DEPENDS ${stamp})
endfunction()
