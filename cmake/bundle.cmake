# The bundle (included from CMakeLists.txt): `cmake --build BUILD --target bundle` makes
# BUILD/bundle/, the install tree (stripped) plus the one library of ours the target
# machine may lack (cJSON), for carrying to a machine that has only the NVIDIA driver and
# the CUDA 13 libraries:
#   bin/shortc, lib/libshortrt.so* (RUNPATH $ORIGIN/../lib), lib/libcjson.so.1,
#   share/shortc/models/*.arch, the headers, pkg-config and CMake files, man pages, docs.
# libclang is dlopened by `shortc --check` alone; NVRTC, the driver and cuBLAS(Lt) come
# from the machine's CUDA installation. tests/install/bundle_scrubbed.sh runs the bundle
# with a scrubbed environment and checks what it needs (docs/gpu.md).
set(SHORTC_BUNDLE_DIR ${CMAKE_BINARY_DIR}/bundle)
set(SHORTC_BUNDLE_MAX_BYTES 33554432) # 32 MiB
# The bundle's binaries find cJSON and each other in lib/ (the install's RUNPATH too).
set_target_properties(shortc shortrt_shared PROPERTIES INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
# cJSON's shared object as the linker sees it (…/libcjson.so); bundle_finish.cmake copies
# the file its soname names.
find_library(SHORTC_CJSON_LIBRARY NAMES cjson HINTS ${CJSON_LIBRARY_DIRS} REQUIRED)
add_custom_target(bundle
  COMMAND ${CMAKE_COMMAND} -E rm -rf ${SHORTC_BUNDLE_DIR}
  COMMAND ${CMAKE_COMMAND} --install ${CMAKE_BINARY_DIR} --prefix ${SHORTC_BUNDLE_DIR} --strip
  COMMAND ${CMAKE_COMMAND} -DBUNDLE=${SHORTC_BUNDLE_DIR} -DLIBDIR=${CMAKE_INSTALL_LIBDIR}
          -DCJSON=${SHORTC_CJSON_LIBRARY} -DMAX_BYTES=${SHORTC_BUNDLE_MAX_BYTES}
          -P ${CMAKE_CURRENT_SOURCE_DIR}/cmake/bundle_finish.cmake
  DEPENDS shortc shortrt shortrt_shared
  COMMENT "Making the relocatable bundle in ${SHORTC_BUNDLE_DIR}"
  VERBATIM)
