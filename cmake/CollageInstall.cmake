# `cmake --install BUILD --prefix PREFIX` installs collage for applications and for backend
# vendors:
#   bin/collage, bin/collage_measure_worker   the command line and its measurement worker
#   bin/collage_ray_dispatch.py               its Ray dispatcher (collage optimize --workers ray)
#   lib/libcollage.so                         every layer and built-in backend in one library
#   lib/collage_backends/                     the engines' backends as plug-ins (ONNX Runtime,
#                                             OpenVINO, MKL), loaded when found
#   lib/collage_engines/                      the engines' libraries they load
#   include/collage/*.h                       the application API (session, tensor, status, optimize)
#   include/collage/sdk/*.h                   the backend SDK
#   lib/cmake/collage/                        find_package(collage CONFIG): collage::collage
#                                             (link an application), collage::sdk (headers of a
#                                             plug-in) and collage_plugin_module() (CollagePlugin.cmake)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The folders of the shared libraries `targets` link that the dynamic linker does not search
# by itself (Debian's OpenMP OpenBLAS variant): the installed library and executables find
# them there, as the build's do. The link closure is collage_external_libraries'
# (cmake/CollageSharedLibrary.cmake).
function(collage_runtime_library_dirs out)
  collage_external_libraries(libraries ${ARGN})
  set(dirs "")
  foreach(item IN LISTS libraries)
    if(TARGET ${item})
      get_target_property(imported ${item} IMPORTED)
      if(NOT imported)
        continue()
      endif()
      foreach(property IMPORTED_LOCATION_RELEASE IMPORTED_LOCATION_NOCONFIG IMPORTED_LOCATION)
        get_target_property(location ${item} ${property})
        if(location)
          set(item ${location})
          break()
        endif()
      endforeach()
    endif()
    if(IS_ABSOLUTE "${item}" AND item MATCHES "\\.so")
      get_filename_component(dir "${item}" DIRECTORY)
      # The compiler's own folder holds link-time names only (libgomp.so), never a soname.
      if(NOT dir MATCHES "^(/usr)?/lib(64)?(/${CMAKE_LIBRARY_ARCHITECTURE})?$|^/usr/lib/gcc/")
        list(APPEND dirs ${dir})
      endif()
    endif()
  endforeach()
  list(REMOVE_DUPLICATES dirs)
  set(${out} ${dirs} PARENT_SCOPE)
endfunction()
get_property(backend_targets GLOBAL PROPERTY COLLAGE_BACKEND_TARGETS)
collage_runtime_library_dirs(COLLAGE_RUNTIME_LIBRARY_DIRS ${backend_targets})

# Paths relative to the installed file ($ORIGIN), so that the prefix can move: the programs
# find libcollage.so in ../lib, the engine plug-ins (lib/collage_backends/) find it in .. and
# their engines in ../collage_engines, copied there below. Only Debian's libraries outside
# the default search (the OpenMP build of OpenBLAS) are named by absolute path.
set_target_properties(collage_shared PROPERTIES INSTALL_RPATH "${COLLAGE_RUNTIME_LIBRARY_DIRS}")
set_target_properties(collage collage_measure_worker PROPERTIES
                      INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR};${COLLAGE_RUNTIME_LIBRARY_DIRS}")
get_property(engine_plugin_targets GLOBAL PROPERTY COLLAGE_ENGINE_PLUGIN_TARGETS)
if(engine_plugin_targets)
  set_target_properties(${engine_plugin_targets} PROPERTIES
                        INSTALL_RPATH "$ORIGIN/..;$ORIGIN/../collage_engines")
  install(TARGETS ${engine_plugin_targets} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/collage_backends)
endif()
# The engines' run-time files (each engine backend's ENGINE_FILES), copied at install time
# (the globs are expanded then). COLLAGE_INSTALL_ENGINES=OFF leaves them out: the engines'
# backends then load only where the dynamic linker finds the engines (LD_LIBRARY_PATH), and
# are listed as unavailable elsewhere.
option(COLLAGE_INSTALL_ENGINES "Copy the engines' libraries into the install (lib/collage_engines)" ON)
get_property(engine_files GLOBAL PROPERTY COLLAGE_ENGINE_FILES)
if(COLLAGE_INSTALL_ENGINES AND engine_files)
  set(engines_destination ${CMAKE_INSTALL_LIBDIR}/collage_engines)
  install(CODE "
    file(GLOB engine_files LIST_DIRECTORIES false ${engine_files})
    foreach(file IN LISTS engine_files)
      get_filename_component(name \${file} NAME)
      # Followed, not copied as links: the wheels' files are plain, install_engines.sh's
      # soname links point at them.
      file(REAL_PATH \${file} real)
      file(INSTALL \${real} DESTINATION \${CMAKE_INSTALL_PREFIX}/${engines_destination})
      get_filename_component(real_name \${real} NAME)
      if(NOT real_name STREQUAL name)
        file(RENAME \${CMAKE_INSTALL_PREFIX}/${engines_destination}/\${real_name}
                    \${CMAKE_INSTALL_PREFIX}/${engines_destination}/\${name})
      endif()
    endforeach()")
endif()
install(TARGETS collage collage_measure_worker RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(PROGRAMS tools/ray/collage_ray_dispatch.py DESTINATION ${CMAKE_INSTALL_BINDIR})
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
