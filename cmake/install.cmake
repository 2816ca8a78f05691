# Install rules (included from CMakeLists.txt): `cmake --install build [--prefix P]` puts
#   bin/shortc                                   the compiler and CLI (libshortrt linked in)
#   lib/libshortrt.a, lib/libshortrt.so*         the runtime, static and shared
#   include/shortrt.h, include/shortrt_version.h the public API
#   include/shortsim/shortsim_*.h                the simulator's prelude and ABI (the library
#                                                carries its own copy; these are for reading and
#                                                for compiling kernels by hand)
#   lib/pkgconfig/shortrt.pc                     pkg-config (relocatable: prefix from ${pcfiledir})
#   lib/cmake/shortrt/                           find_package(shortrt): shortrt::shortrt (shared),
#                                                shortrt::shortrt_static, with a version file
#   share/shortc/models/*.arch                   the bundled models (`shortc demo`'s default)
#   share/shortc/tools/convert_checkpoint.py     the checkpoint converter (`shortc convert`)
#   share/man/man1/shortc.1, man3/shortrt.3      man pages
#   share/doc/shortc/                            README, LICENSE, docs/*.md (as README links them), samples/argmax.c
# Nothing installed refers to the source or build tree; the prefix can be moved.
include(CMakePackageConfigHelpers)

set(SHORTRT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/shortrt)
set(SHORTC_DOC_DIR ${CMAKE_INSTALL_DATADIR}/doc/shortc)

# Runtime search paths of libraries linked from outside the system directories
# are kept in the installed binaries (NVRTC, the driver and cuBLAS are dlopened).
set_target_properties(shortc shortrt_shared PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)

install(TARGETS shortc RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS shortrt shortrt_shared EXPORT shortrtTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${CMAKE_CURRENT_SOURCE_DIR}/runtime/include/shortrt.h
              ${CMAKE_CURRENT_BINARY_DIR}/include/shortrt_version.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${SHORTSIM_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/shortsim)

# CMake package
install(EXPORT shortrtTargets NAMESPACE shortrt:: DESTINATION ${SHORTRT_CMAKE_DIR})
configure_package_config_file(${CMAKE_CURRENT_SOURCE_DIR}/cmake/shortrtConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/shortrtConfig.cmake INSTALL_DESTINATION ${SHORTRT_CMAKE_DIR})
# 0.x: a minor version may change the API, so only the same major.minor is compatible
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/shortrtConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/shortrtConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/shortrtConfigVersion.cmake
        DESTINATION ${SHORTRT_CMAKE_DIR})

# pkg-config: the prefix is found from the .pc file's own directory
file(RELATIVE_PATH SHORTRT_PC_PREFIX_REL ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" SHORTRT_PC_PREFIX_REL "${SHORTRT_PC_PREFIX_REL}")
file(RELATIVE_PATH SHORTRT_PC_LIBDIR_REL ${CMAKE_INSTALL_PREFIX} ${CMAKE_INSTALL_FULL_LIBDIR})
file(RELATIVE_PATH SHORTRT_PC_INCLUDEDIR_REL ${CMAKE_INSTALL_PREFIX} ${CMAKE_INSTALL_FULL_INCLUDEDIR})
configure_file(${CMAKE_CURRENT_SOURCE_DIR}/cmake/shortrt.pc.in ${CMAKE_CURRENT_BINARY_DIR}/shortrt.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/shortrt.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# data, man pages, documentation
install(DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/models/ DESTINATION ${CMAKE_INSTALL_DATADIR}/shortc/models
        FILES_MATCHING PATTERN "*.arch")
install(PROGRAMS ${CMAKE_CURRENT_SOURCE_DIR}/tools/convert_checkpoint.py DESTINATION ${CMAKE_INSTALL_DATADIR}/shortc/tools)
install(FILES ${CMAKE_CURRENT_SOURCE_DIR}/docs/man/shortc.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${CMAKE_CURRENT_SOURCE_DIR}/docs/man/shortrt.3 DESTINATION ${CMAKE_INSTALL_MANDIR}/man3)
install(FILES ${CMAKE_CURRENT_SOURCE_DIR}/README.md ${CMAKE_CURRENT_SOURCE_DIR}/LICENSE DESTINATION ${SHORTC_DOC_DIR})
install(DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/docs/ DESTINATION ${SHORTC_DOC_DIR}/docs
        FILES_MATCHING PATTERN "*.md" PATTERN "man" EXCLUDE)
install(FILES ${CMAKE_CURRENT_SOURCE_DIR}/samples/argmax.c DESTINATION ${SHORTC_DOC_DIR}/samples)
