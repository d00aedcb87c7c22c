# Checks that each compiled copy of src/ops/kernels/sgemm_variant.cc defines its external
# symbols only inside its own namespace (collage::sgemm_<isa>). An inline or template function
# from elsewhere (a std:: template, say) left out of line in the AVX-512 copy would be one
# weak definition among several, and the linker may keep that one for the whole program:
# the baseline code would then run AVX-512 instructions.
#   cmake -DNM=<nm> -DOBJECTS=<object>|<object>... -P sgemm_variant_symbols.cmake
string(REPLACE "|" ";" objects "${OBJECTS}")
if(objects STREQUAL "")
  message(FATAL_ERROR "no objects given (-DOBJECTS=...)")
endif()
foreach(object IN LISTS objects)
  string(REGEX MATCH "collage_sgemm_([a-z0-9]+)\\.dir" dir "${object}")
  if(NOT dir)
    message(FATAL_ERROR "${object}: not a collage_sgemm_<isa> object")
  endif()
  set(namespace "collage::sgemm_${CMAKE_MATCH_1}::")
  execute_process(COMMAND ${NM} --defined-only --extern-only -C ${object}
                  OUTPUT_VARIABLE symbols RESULT_VARIABLE nm_result ERROR_VARIABLE nm_error)
  if(NOT nm_result EQUAL 0)
    message(FATAL_ERROR "${NM} ${object} failed: ${nm_error}")
  endif()
  string(REPLACE "\n" ";" lines "${symbols}")
  set(found_sgemm FALSE)
  foreach(line IN LISTS lines)
    # The exception personality's pointer: data GCC emits alike in every C++ object.
    if(line STREQUAL "" OR line MATCHES " DW\\.ref\\.__gxx_personality_v0$")
      continue()
    endif()
    string(FIND "${line}" "${namespace}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "${object} defines a symbol outside ${namespace}: ${line}")
    endif()
    if(line MATCHES "${namespace}Sgemm\\(")
      set(found_sgemm TRUE)
    endif()
  endforeach()
  if(NOT found_sgemm)
    message(FATAL_ERROR "${object} does not define ${namespace}Sgemm")
  endif()
  message(STATUS "${object}: every external symbol is in ${namespace}")
endforeach()
