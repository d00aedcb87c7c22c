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

# The shared library: the layers' static libraries (position-independent code) whole, so that
# a plug-in loaded by an application finds every SDK symbol in it.
file(WRITE ${CMAKE_BINARY_DIR}/generated/shared_library.cc.tmp
     "// libcollage.so is the layers' static libraries, linked whole (cmake/CollageInstall.cmake).\n")
file(COPY_FILE ${CMAKE_BINARY_DIR}/generated/shared_library.cc.tmp
     ${CMAKE_BINARY_DIR}/generated/shared_library.cc ONLY_IF_DIFFERENT)
add_library(collage_shared SHARED ${CMAKE_BINARY_DIR}/generated/shared_library.cc)
get_property(layer_targets GLOBAL PROPERTY COLLAGE_LAYER_TARGETS)
target_link_libraries(collage_shared PRIVATE "$<LINK_LIBRARY:WHOLE_ARCHIVE,${layer_targets}>")
target_include_directories(collage_shared INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_compile_features(collage_shared INTERFACE cxx_std_20)
set_target_properties(collage_shared PROPERTIES
  OUTPUT_NAME collage EXPORT_NAME collage
  VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}
  # The libraries it links from outside the system's folders (the engines under the build's
  # engines folder) are found where they were linked from.
  INSTALL_RPATH_USE_LINK_PATH ON)

# The executables find libraries the same way, and the worker beside the command line.
set_target_properties(collage collage_measure_worker PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
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
