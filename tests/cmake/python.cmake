# The Python package (pyproject.toml, python/, docs/python.md):
#   python  builds the wheel with scikit-build-core (linking this build's libshortrt.a), installs it into a fresh
#           venv under build/python/ and runs tests/python with pytest there against this build's shortc
#           (tests/python/run.sh). Needs .ci/setup's /opt/shortc-py (scikit-build-core, build, pytest);
#           skipped without it. Not under the sanitizers: the module is loaded by an uninstrumented python3.
if(PY3 AND NOT SHORTC_SANITIZE)
  add_test(NAME python COMMAND sh ${TESTS_DIR}/python/run.sh ${PY3} ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR}
           $<TARGET_FILE:shortrt> ${SHORTC_BIN})
  set_tests_properties(python PROPERTIES LABELS "python;no-sanitize" TIMEOUT 600 SKIP_RETURN_CODE 77
                       ENVIRONMENT "SHORTC_CACHE=${CMAKE_BINARY_DIR}/test_cache")
endif()
