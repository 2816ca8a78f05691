# The GPU scripts in CI (docs/gpu.md): tests/gpu/accept.sh and tests/gpu/bench.py run
# with --dry-run, the simulator standing in for the GPU and tiny shapes, so neither
# script rots between the GPU runs they exist for.
#   gpu_accept_dry  three tiny models, every check but compute-sanitizer (skipped:
#                   no GPU); exits 1 on any failed check
#   gpu_bench_dry   every section with tiny shapes on the CPU (needs Debian's
#                   python3-torch; transformers' rows are skipped when it is absent)
find_program(SHORTC_PYTHON3 python3)
if(SHORTC_PYTHON3)
  add_test(NAME gpu_accept_dry COMMAND ${SHORTC_PYTHON3} ${TESTS_DIR}/gpu/accept.py --dry-run
           --shortc ${SHORTC_BIN} --out ${CMAKE_CURRENT_BINARY_DIR}/gpu_accept_dry
           --models gpt2_tiny,shortformer_tiny,txl_tiny)
  set_tests_properties(gpu_accept_dry PROPERTIES LABELS "gpu;no-sanitize;slow" TIMEOUT 600
                       PASS_REGULAR_EXPRESSION "accept: [1-9][0-9]* passed, 0 failed")
endif()
if(PY3)
  # where .ci/setup installed transformers, its rows must run (a missing import fails the test)
  if(EXISTS /opt/shortc-hf/transformers)
    set(SHORTC_BENCH_HF --require-hf)
  endif()
  add_test(NAME gpu_bench_dry COMMAND ${PY3} ${TESTS_DIR}/gpu/bench.py --dry-run ${SHORTC_BENCH_HF}
           --shortc ${SHORTC_BIN} --out ${CMAKE_CURRENT_BINARY_DIR}/gpu_bench_dry)
  # .ci/setup installs a transformers for Debian's torch into /opt/shortc-hf (prefill and decode rows)
  # slow: torch on the CPU for every section; the README command leaves it out, CI runs it (`ctest -L slow`)
  set_tests_properties(gpu_bench_dry PROPERTIES LABELS "gpu;no-sanitize;slow" TIMEOUT 600
                       ENVIRONMENT "PYTHONPATH=/opt/shortc-hf"
                       PASS_REGULAR_EXPRESSION "bench: [0-9]+ rows, [1-9][0-9]* with a ratio, 0 failed")
endif()
