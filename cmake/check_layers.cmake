# Fails when a source includes a header of a layer above its own (cmake/CollageLayers.cmake).
#   cmake -DROOT=<source dir> -DTABLE=<layers.txt> -P check_layers.cmake
# TABLE: one line per layer, "name|dir,dir|include/collage/x.h,...|dep,dep". A file belongs
# to the layer whose folder holds it; an #include "a/b.h" names the layer of src/a (or, for
# "collage/x.h", the layer listing include/collage/x.h); an include without a folder is the
# file's own folder's. What no layer claims (tests, tools, generated files) is not checked.
# Backends, in addition, see collage only through its SDK: under backends/<name>/ an include
# with a folder must be "collage/..." (the SDK and the public headers) or "backend/shared/..."
# (the helpers the built-in backends share, which are not installed: a plug-in built out of
# the tree has the SDK alone) -- except the native backend, which is collage's own reference
# kernels (src/ops) run as a backend.
# The application API and its one client here are held to what is installed:
# - the command line (tools/collage) includes only the application API ("collage/...", not
#   "collage/sdk/...") and its own files (an include without a folder);
# - the application API (include/collage/*.h, sdk/ aside) includes only itself, never the SDK,
#   so that no IR or backend type reaches an application through it.
# The measurement worker (tools/measure_worker) is not checked: it is the library's own
# process, serving the library's measurements with the library's internal types.
cmake_minimum_required(VERSION 3.25)
if(NOT ROOT OR NOT TABLE)
  message(FATAL_ERROR "usage: cmake -DROOT=<source dir> -DTABLE=<layers.txt> -P check_layers.cmake")
endif()

file(STRINGS ${TABLE} lines)
set(layers "")
foreach(line IN LISTS lines)
  string(REPLACE "|" ";" fields "${line}")
  list(GET fields 0 name)
  list(GET fields 1 dirs)
  list(GET fields 2 headers)
  list(GET fields 3 deps)
  string(REPLACE "," ";" dirs "${dirs}")
  string(REPLACE "," ";" headers "${headers}")
  string(REPLACE "," ";" deps "${deps}")
  string(STRIP "${deps}" deps)
  list(APPEND layers ${name})
  set(dirs_${name} "")
  foreach(dir IN LISTS dirs)
    string(STRIP "${dir}" dir)
    if(dir)
      list(APPEND dirs_${name} ${dir})
      set(layer_of_dir_${dir} ${name})
    endif()
  endforeach()
  foreach(header IN LISTS headers)
    string(STRIP "${header}" header)
    if(header)
      set(layer_of_header_${header} ${name})
      list(APPEND headers_${name} ${header})
    endif()
  endforeach()
  set(deps_${name} ${deps})
endforeach()

# allowed_<layer>: the layer itself and everything it reaches through DEPENDS.
foreach(name IN LISTS layers)
  set(allowed ${name})
  set(frontier ${deps_${name}})
  while(frontier)
    list(POP_FRONT frontier dep)
    if(NOT dep IN_LIST layers)
      message(FATAL_ERROR "layer '${name}' depends on '${dep}', which is no layer")
    endif()
    if(NOT dep IN_LIST allowed)
      list(APPEND allowed ${dep})
      list(APPEND frontier ${deps_${dep}})
    endif()
  endwhile()
  set(allowed_${name} ${allowed})
endforeach()

set(violations "")
foreach(name IN LISTS layers)
  set(files ${headers_${name}})
  list(TRANSFORM files PREPEND "${ROOT}/")
  foreach(dir IN LISTS dirs_${name})
    file(GLOB_RECURSE dir_files ${ROOT}/${dir}/*.cc ${ROOT}/${dir}/*.h)
    list(APPEND files ${dir_files})
  endforeach()
  foreach(file IN LISTS files)
    file(STRINGS ${file} includes REGEX "^[ \t]*#[ \t]*include[ \t]+\"")
    foreach(include IN LISTS includes)
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]+\"([^\"]+)\".*" "\\1" path "${include}")
      set(target "")
      if(DEFINED layer_of_header_include/${path})
        set(target ${layer_of_header_include/${path}})
      elseif(path MATCHES "^([^/]+)/")
        set(top ${CMAKE_MATCH_1})
        if(DEFINED layer_of_dir_src/${top})
          set(target ${layer_of_dir_src/${top}})
        endif()
      endif()
      file(RELATIVE_PATH relative ${ROOT} ${file})
      if(relative MATCHES "^backends/[^/]+/tests/")
        # A backend's tests, like tests/, are clients of every layer.
        continue()
      elseif(target AND NOT target IN_LIST allowed_${name})
        string(APPEND violations
               "  ${relative} (layer ${name}) includes \"${path}\" (layer ${target})\n")
      elseif(relative MATCHES "^backends/" AND NOT relative MATCHES "^backends/native/"
             AND path MATCHES "/" AND NOT path MATCHES "^collage/"
             AND NOT path MATCHES "^backend/shared/")
        string(APPEND violations
               "  ${relative} (a backend) includes \"${path}\", which is not in collage's SDK "
               "(include/collage/sdk)\n")
      endif()
    endforeach()
  endforeach()
endforeach()

# The application API's own headers and the command line. include/collage/backend.h and
# layout.h are the SDK's old paths (aliases of collage/sdk/backend.h and layout.h): SDK, not
# application API.
set(sdk_aliases collage/backend.h collage/layout.h)
file(GLOB application_headers ${ROOT}/include/collage/*.h)
file(GLOB cli_files ${ROOT}/tools/collage/*.cc ${ROOT}/tools/collage/*.h)
foreach(file IN LISTS application_headers cli_files)
  file(RELATIVE_PATH relative ${ROOT} ${file})
  string(REGEX REPLACE "^include/" "" as_included "${relative}")
  if(as_included IN_LIST sdk_aliases)
    continue()
  endif()
  file(STRINGS ${file} includes REGEX "^[ \t]*#[ \t]*include[ \t]+\"")
  foreach(include IN LISTS includes)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]+\"([^\"]+)\".*" "\\1" path "${include}")
    set(public FALSE)
    if(path MATCHES "^collage/[^/]+$" AND NOT path IN_LIST sdk_aliases)
      set(public TRUE)
    endif()
    if(relative MATCHES "^include/" AND NOT public)
      string(APPEND violations
             "  ${relative} (the application API) includes \"${path}\", which is not in the "
             "application API (include/collage/*.h)\n")
    elseif(relative MATCHES "^tools/" AND path MATCHES "/" AND NOT public)
      string(APPEND violations
             "  ${relative} (the command line) includes \"${path}\", which is not in the "
             "application API (include/collage/*.h)\n")
    endif()
  endforeach()
endforeach()

if(violations)
  message(FATAL_ERROR
          "collage's layers: a layer may include only its own headers and those of the layers "
          "below it, backends only the SDK (and backend/shared/), and the application API and the "
          "command line only the application API (cmake/CollageLayers.cmake). Includes that "
          "break this:\n${violations}")
endif()
