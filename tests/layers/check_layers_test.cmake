# The layer check (cmake/check_layers.cmake) on small trees: an upward include, a backend
# including a header outside the SDK, the command line including anything but the application
# API and its own files, and the application API including the SDK are refused, naming the
# file and the include; the allowed includes pass.   cmake -DSOURCE_DIR=<collage source> -DWORK=<scratch dir> -P ...
cmake_minimum_required(VERSION 3.25)
set(checker ${SOURCE_DIR}/cmake/check_layers.cmake)
file(REMOVE_RECURSE ${WORK})

function(check_tree name expect_ok expect_text)
  set(root ${WORK}/${name})
  execute_process(COMMAND ${CMAKE_COMMAND} -DROOT=${root} -DTABLE=${root}/layers.txt -P ${checker}
                  RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(expect_ok AND NOT result EQUAL 0)
    message(FATAL_ERROR "${name}: expected to pass, failed:\n${out}")
  elseif(NOT expect_ok AND result EQUAL 0)
    message(FATAL_ERROR "${name}: expected to fail, passed")
  endif()
  if(expect_text)
    string(FIND "${out}" "${expect_text}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "${name}: the message lacks '${expect_text}':\n${out}")
    endif()
  endif()
  message(STATUS "${name}: as expected")
endfunction()

# Two layers, high above low, a public header of low, one backend folder, an application
# header and the command line.
function(write_tree name low_include backend_include)
  set(cli_include "collage/session.h")
  set(api_include "collage/status.h")
  if(ARGC GREATER 3)
    set(cli_include "${ARGV3}")
  endif()
  if(ARGC GREATER 4)
    set(api_include "${ARGV4}")
  endif()
  set(root ${WORK}/${name})
  file(WRITE ${root}/layers.txt "low|src/low||\nhigh|src/high,backends||low\n")
  file(WRITE ${root}/src/low/a.h "#pragma once\n#include \"${low_include}\"\n")
  file(WRITE ${root}/src/high/b.h "#pragma once\n#include \"low/a.h\"\n#include <vector>\n")
  file(WRITE ${root}/backends/mine/kernel.cc
       "#include \"kernel.h\"\n#include \"${backend_include}\"\n")
  file(WRITE ${root}/include/collage/session.h "#pragma once\n#include \"${api_include}\"\n")
  # The SDK's old path, an alias of the SDK's header: it may include the SDK.
  file(WRITE ${root}/include/collage/backend.h "#pragma once\n#include \"collage/sdk/backend.h\"\n")
  file(WRITE ${root}/tools/collage/main.cc
       "#include \"commands.h\"\n#include \"${cli_include}\"\n#include <cstdio>\n")
endfunction()

write_tree(clean "low/other.h" "collage/sdk/backend.h")
check_tree(clean TRUE "")
write_tree(upward "high/b.h" "collage/sdk/backend.h")
check_tree(upward FALSE "src/low/a.h (layer low) includes \"high/b.h\" (layer high)")
write_tree(outside_sdk "low/other.h" "low/a.h")
check_tree(outside_sdk FALSE "backends/mine/kernel.cc (a backend) includes \"low/a.h\", which is not in collage's SDK")
write_tree(cli_internal "low/other.h" "collage/sdk/backend.h" "low/a.h")
check_tree(cli_internal FALSE "tools/collage/main.cc (the command line) includes \"low/a.h\", which is not in the application API")
write_tree(cli_sdk "low/other.h" "collage/sdk/backend.h" "collage/sdk/graph.h")
check_tree(cli_sdk FALSE "tools/collage/main.cc (the command line) includes \"collage/sdk/graph.h\"")
write_tree(cli_sdk_alias "low/other.h" "collage/sdk/backend.h" "collage/backend.h")
check_tree(cli_sdk_alias FALSE "tools/collage/main.cc (the command line) includes \"collage/backend.h\"")
write_tree(api_sdk "low/other.h" "collage/sdk/backend.h" "collage/session.h" "collage/sdk/graph.h")
check_tree(api_sdk FALSE "include/collage/session.h (the application API) includes \"collage/sdk/graph.h\", which is not in the application API")
write_tree(api_internal "low/other.h" "collage/sdk/backend.h" "collage/session.h" "low/a.h")
check_tree(api_internal FALSE "include/collage/session.h (the application API) includes \"low/a.h\"")
file(REMOVE_RECURSE ${WORK})
