# libcollage.so: the layers' static libraries (position-independent code) linked whole into
# one shared library, which every program of the build links (collage_core): the command line,
# the measurement worker, the tests, the Python module and applications of an install.
#
# One shared library, not the layers linked into each program, because the engines' backends
# (ONNX Runtime, OpenVINO, MKL) are plug-ins loaded at run time (cmake/CollageBackend.cmake):
# a plug-in links libcollage.so and binds to the very copy the program runs, in any process
# (a Python interpreter loads extension modules with RTLD_LOCAL, where symbols exported by an
# executable would not reach it).
get_property(layer_targets GLOBAL PROPERTY COLLAGE_LAYER_TARGETS)
file(WRITE ${CMAKE_BINARY_DIR}/generated/shared_library.cc.tmp
     "// libcollage.so is the layers' static libraries, linked whole (cmake/CollageSharedLibrary.cmake).\n")
file(COPY_FILE ${CMAKE_BINARY_DIR}/generated/shared_library.cc.tmp
     ${CMAKE_BINARY_DIR}/generated/shared_library.cc ONLY_IF_DIFFERENT)
add_library(collage_shared SHARED ${CMAKE_BINARY_DIR}/generated/shared_library.cc)
# Each archive once inside --whole-archive, then the layers as usual for their dependencies
# (their archives add nothing more: every member is already in).
set(layer_archives "")
foreach(layer IN LISTS layer_targets)
  list(APPEND layer_archives $<TARGET_FILE:${layer}>)
endforeach()
target_link_libraries(collage_shared PRIVATE -Wl,--whole-archive ${layer_archives}
                      -Wl,--no-whole-archive ${layer_targets})
add_dependencies(collage_shared ${layer_targets})
target_include_directories(collage_shared INTERFACE $<INSTALL_INTERFACE:include>)
target_compile_features(collage_shared INTERFACE cxx_std_20)
# Under pip the library sits in the package folder under its plain name (a wheel holds no
# symbolic links for the versioned names).
if(NOT SKBUILD)
  set_target_properties(collage_shared PROPERTIES
    VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
endif()
set_target_properties(collage_shared PROPERTIES OUTPUT_NAME collage EXPORT_NAME collage)

# The libraries outside collage that `targets` link, followed through their link interfaces,
# collage's own static and object libraries left out (they are inside libcollage.so); the
# imported ones named collage_* (a backend's handle on its library) are outside.
function(collage_external_libraries out)
  set(found "")
  set(seen "")
  set(queue ${ARGN})
  while(queue)
    list(POP_FRONT queue item)
    if(item IN_LIST seen)
      continue()
    endif()
    list(APPEND seen ${item})
    if(TARGET ${item})
      get_target_property(links ${item} INTERFACE_LINK_LIBRARIES)
      if(links)
        list(APPEND queue ${links})
      endif()
      get_target_property(imported ${item} IMPORTED)
      if(imported OR NOT item MATCHES "^collage_")
        list(APPEND found ${item})
      endif()
    elseif(NOT item MATCHES "^\\$<")
      list(APPEND found ${item})
    endif()
  endwhile()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

# collage_core, what the build's programs link: libcollage.so, with the layers' include folders
# and compile settings (the tests reach private headers under src/) and the outside libraries
# those headers use (protobuf, fmt, OpenMP, a backend's library a test calls itself).
get_property(backend_targets GLOBAL PROPERTY COLLAGE_BACKEND_TARGETS)
add_library(collage_core INTERFACE)
foreach(target IN LISTS layer_targets backend_targets)
  foreach(usage INCLUDE_DIRECTORIES COMPILE_DEFINITIONS COMPILE_OPTIONS)
    set_property(TARGET collage_core APPEND PROPERTY INTERFACE_${usage}
                 $<TARGET_PROPERTY:${target},INTERFACE_${usage}>)
  endforeach()
endforeach()
collage_external_libraries(collage_core_external ${layer_targets} ${backend_targets})
target_link_libraries(collage_core INTERFACE collage_shared ${collage_core_external})
