# `cmake --install BUILD --prefix PREFIX` installs collage for applications and for backend
# vendors:
#   bin/collage, bin/collage_measure_worker   the command line and its measurement worker
#   lib/libcollage.so                         every layer and built-in backend in one library
#   include/collage/*.h                       the application API (session, tensor, status, optimize)
#   include/collage/sdk/*.h                   the backend SDK
#   lib/cmake/collage/                        find_package(collage CONFIG): collage::collage
#                                             (link an application), collage::sdk (headers of a
#                                             plug-in) and collage_plugin_module() (CollagePlugin.cmake)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The folders of the shared libraries `targets` link that the dynamic linker does not search
# by itself (the engines' wheels under the build folder, Debian's OpenMP OpenBLAS variant):
# the installed library and executables find them there, as the build's do.
function(collage_runtime_library_dirs out)
  set(dirs "")
  set(seen "")
  set(queue ${ARGN})
  while(queue)
    list(POP_FRONT queue item)
    if(item IN_LIST seen OR item MATCHES "^\\$<|^-")
      continue()
    endif()
    list(APPEND seen ${item})
    if(TARGET ${item})
      get_target_property(imported ${item} IMPORTED)
      if(imported)
        foreach(property IMPORTED_LOCATION_RELEASE IMPORTED_LOCATION_NOCONFIG IMPORTED_LOCATION)
          get_target_property(location ${item} ${property})
          if(location)
            list(APPEND queue ${location})
            break()
          endif()
        endforeach()
      endif()
      get_target_property(links ${item} INTERFACE_LINK_LIBRARIES)
      if(links)
        list(APPEND queue ${links})
      endif()
    elseif(IS_ABSOLUTE "${item}" AND item MATCHES "\\.so")
      get_filename_component(dir "${item}" DIRECTORY)
      # The compiler's own folder holds link-time names only (libgomp.so), never a soname.
      if(NOT dir MATCHES "^(/usr)?/lib(64)?(/${CMAKE_LIBRARY_ARCHITECTURE})?$|^/usr/lib/gcc/")
        list(APPEND dirs ${dir})
      endif()
    endif()
  endwhile()
  list(REMOVE_DUPLICATES dirs)
  set(${out} ${dirs} PARENT_SCOPE)
endfunction()
get_property(backend_targets GLOBAL PROPERTY COLLAGE_BACKEND_TARGETS)
collage_runtime_library_dirs(COLLAGE_RUNTIME_LIBRARY_DIRS ${backend_targets})

# The shared library: the layers' static libraries (position-independent code) whole, so that
# a plug-in loaded by an application finds every SDK symbol in it.
file(WRITE ${CMAKE_BINARY_DIR}/generated/shared_library.cc.tmp
     "// libcollage.so is the layers' static libraries, linked whole (cmake/CollageInstall.cmake).\n")
file(COPY_FILE ${CMAKE_BINARY_DIR}/generated/shared_library.cc.tmp
     ${CMAKE_BINARY_DIR}/generated/shared_library.cc ONLY_IF_DIFFERENT)
add_library(collage_shared SHARED ${CMAKE_BINARY_DIR}/generated/shared_library.cc)
get_property(layer_targets GLOBAL PROPERTY COLLAGE_LAYER_TARGETS)
# Each archive once inside --whole-archive, then the layers as usual for their dependencies
# (their archives add nothing more: every member is already in).
set(layer_archives "")
foreach(layer IN LISTS layer_targets)
  list(APPEND layer_archives $<TARGET_FILE:${layer}>)
endforeach()
target_link_libraries(collage_shared PRIVATE -Wl,--whole-archive ${layer_archives}
                      -Wl,--no-whole-archive ${layer_targets})
add_dependencies(collage_shared ${layer_targets})
target_include_directories(collage_shared INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_compile_features(collage_shared INTERFACE cxx_std_20)
set_target_properties(collage_shared PROPERTIES
  OUTPUT_NAME collage EXPORT_NAME collage
  VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}
  INSTALL_RPATH "${COLLAGE_RUNTIME_LIBRARY_DIRS}")
set_target_properties(collage collage_measure_worker PROPERTIES
                      INSTALL_RPATH "${COLLAGE_RUNTIME_LIBRARY_DIRS}")
install(TARGETS collage collage_measure_worker RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS collage_shared collage_sdk EXPORT collageTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY include/collage DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")

set(config_dir ${CMAKE_INSTALL_LIBDIR}/cmake/collage)
install(EXPORT collageTargets NAMESPACE collage:: DESTINATION ${config_dir})
configure_package_config_file(cmake/collageConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/generated/collageConfig.cmake
                              INSTALL_DESTINATION ${config_dir})
# Pre-1.0: an ABI may change with the minor version.
write_basic_package_version_file(${CMAKE_BINARY_DIR}/generated/collageConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/generated/collageConfig.cmake
              ${CMAKE_BINARY_DIR}/generated/collageConfigVersion.cmake
              cmake/CollagePlugin.cmake
        DESTINATION ${config_dir})
