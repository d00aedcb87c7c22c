# The layer check (cmake/check_layers.cmake) on small trees: an upward include and a backend
# including a header outside the SDK are refused, naming the file and the include; the
# allowed includes pass.   cmake -DSOURCE_DIR=<collage source> -DWORK=<scratch dir> -P ...
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

# Two layers, high above low, a public header of low, and one backend folder.
function(write_tree name low_include backend_include)
  set(root ${WORK}/${name})
  file(WRITE ${root}/layers.txt "low|src/low||\nhigh|src/high,backends||low\n")
  file(WRITE ${root}/src/low/a.h "#pragma once\n#include \"${low_include}\"\n")
  file(WRITE ${root}/src/high/b.h "#pragma once\n#include \"low/a.h\"\n#include <vector>\n")
  file(WRITE ${root}/backends/mine/kernel.cc
       "#include \"kernel.h\"\n#include \"${backend_include}\"\n")
endfunction()

write_tree(clean "low/other.h" "collage/sdk/backend.h")
check_tree(clean TRUE "")
write_tree(upward "high/b.h" "collage/sdk/backend.h")
check_tree(upward FALSE "src/low/a.h (layer low) includes \"high/b.h\" (layer high)")
write_tree(outside_sdk "low/other.h" "low/a.h")
check_tree(outside_sdk FALSE "backends/mine/kernel.cc (a backend) includes \"low/a.h\", which is not in collage's SDK")
file(REMOVE_RECURSE ${WORK})
