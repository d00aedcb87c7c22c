# The float GEMM (src/ops/kernels/sgemm_variant.cc) compiled once per instruction set.
#
# The build is portable (no -march=native unless COLLAGE_NATIVE_ARCH), but Sgemm's register
# tile and vector width are fixed at compile time, and the baseline x86-64 copy runs at a
# fraction of an AVX-512 core's speed. So on x86-64 the same source is compiled three times,
# as object libraries with their own flags, each into its own namespace (the
# COLLAGE_SGEMM_VARIANT macro) so that the copies do not collide; sgemm_dispatch.cc picks the
# widest one the CPU supports at run time. The flags name exactly the features the
# dispatcher checks (not -march=x86-64-v4, which would also allow BMI and friends).
# Elsewhere, and in a COLLAGE_NATIVE_ARCH build, only the baseline copy is compiled.
#
#   collage_add_sgemm_variants(<target>)  adds the copies' objects to <target>.
# The source itself must be left out of <target>'s own sources. Sets, for the tests,
# COLLAGE_SGEMM_X86_VARIANTS (whether the wide copies are built) and
# COLLAGE_SGEMM_VARIANT_OBJECTS (the copies' objects).

set(COLLAGE_SGEMM_VARIANT_SOURCE ${PROJECT_SOURCE_DIR}/src/ops/kernels/sgemm_variant.cc)

function(collage_add_sgemm_variants target)
  set(variants baseline)
  set(x86_variants OFF)
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$" AND NOT COLLAGE_NATIVE_ARCH)
    set(variants avx512 avx2 baseline)
    set(x86_variants ON)
    set(flags_avx512 -mavx512f -mavx512bw -mavx512dq -mavx512vl -mavx2 -mfma)
    set(flags_avx2 -mavx2 -mfma)
    set_property(SOURCE ${PROJECT_SOURCE_DIR}/src/ops/kernels/sgemm_dispatch.cc APPEND PROPERTY
                 COMPILE_DEFINITIONS COLLAGE_SGEMM_X86_VARIANTS)
  endif()
  set(COLLAGE_SGEMM_X86_VARIANTS ${x86_variants} PARENT_SCOPE)
  set(objects "")
  foreach(variant IN LISTS variants)
    set(library collage_sgemm_${variant})
    add_library(${library} OBJECT ${COLLAGE_SGEMM_VARIANT_SOURCE})
    target_include_directories(${library} PRIVATE ${PROJECT_SOURCE_DIR}/include
                                                  ${PROJECT_SOURCE_DIR}/src)
    target_compile_definitions(${library} PRIVATE COLLAGE_SGEMM_VARIANT=sgemm_${variant})
    target_compile_options(${library} PRIVATE ${flags_${variant}})
    target_link_libraries(${library} PRIVATE OpenMP::OpenMP_CXX)
    target_sources(${target} PRIVATE $<TARGET_OBJECTS:${library}>)
    list(APPEND objects $<TARGET_OBJECTS:${library}>)
  endforeach()
  set(COLLAGE_SGEMM_VARIANT_OBJECTS ${objects} PARENT_SCOPE)
endfunction()
