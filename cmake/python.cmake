# The Python extension shortc._shortc (python/_shortc.c over shortrt.h), built against the stable ABI of
# CPython 3.9 (one abi3 module for every CPython >= 3.9). scikit-build-core (pyproject.toml) builds the target
# shortc_python and installs the component "python" into the wheel next to python/shortc/*.py.
#
# SHORTC_PYTHON_SHORTRT: an already built libshortrt.a (of this source tree) to link instead of building the
# runtime again; the ctest `python` builds its test wheel that way in seconds (tests/python/run.sh).
find_package(Python 3.9 REQUIRED COMPONENTS Interpreter Development.Module)
set(SHORTC_PYTHON_SHORTRT "" CACHE FILEPATH "A built libshortrt.a to link the Python extension with (empty: build it)")
add_library(shortc_python MODULE ${CMAKE_CURRENT_SOURCE_DIR}/python/_shortc.c)
set_target_properties(shortc_python PROPERTIES OUTPUT_NAME _shortc PREFIX "" SUFFIX ".abi3.so"
                      C_VISIBILITY_PRESET hidden)
target_include_directories(shortc_python PRIVATE ${Python_INCLUDE_DIRS} ${CMAKE_CURRENT_SOURCE_DIR}/runtime/include
                           ${CMAKE_CURRENT_BINARY_DIR}/include)
if(SHORTC_PYTHON_SHORTRT)
  target_link_libraries(shortc_python PRIVATE ${SHORTC_PYTHON_SHORTRT} ${SHORTRT_LINK_DEPS})
else()
  target_link_libraries(shortc_python PRIVATE shortrt)
endif()
# only PyInit__shortc is exported: the runtime's symbols stay inside the module
target_link_options(shortc_python PRIVATE -Wl,--exclude-libs,ALL)
install(TARGETS shortc_python LIBRARY DESTINATION shortc COMPONENT python)
