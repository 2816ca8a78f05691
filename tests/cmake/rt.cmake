# Runtime tests (tests/rt/): small C programs linking libshortrt. They see the
# runtime's private headers (runtime/src) to test internals such as the cache
# and the NVRTC compile path without a GPU.
file(GLOB SHORTC_RT_TESTS CONFIGURE_DEPENDS ${TESTS_DIR}/rt/test_*.c)
foreach(src ${SHORTC_RT_TESTS})
  get_filename_component(name ${src} NAME_WE)
  add_executable(rt_${name} ${src})
  target_link_libraries(rt_${name} PRIVATE shortrt)
  target_include_directories(rt_${name} PRIVATE ${TESTS_DIR}/rt ${CMAKE_SOURCE_DIR}/runtime/src)
  target_include_directories(rt_${name} SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
  target_compile_definitions(rt_${name} PRIVATE SHORTC_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
  add_test(NAME rt_${name} COMMAND rt_${name})
  set_tests_properties(rt_${name} PROPERTIES LABELS rt ENVIRONMENT "SHORTC_CACHE=${CMAKE_BINARY_DIR}/test_cache")
endforeach()
