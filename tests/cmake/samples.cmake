# samples/: the programs that use only shortrt.h must run.
#   sample_argmax_default   default prompt on the simulator (the prompt is longer than argv)
#   sample_argmax_tokens    explicit tokens on the reference backend, matching the golden weights
#   sample_argmax_bad       a missing model file is a one-line error and exit 1
add_test(NAME sample_argmax_default COMMAND $<TARGET_FILE:argmax> ${CMAKE_SOURCE_DIR}/models/gpt2_tiny.arch --backend sim --seed 3)
set_tests_properties(sample_argmax_default PROPERTIES LABELS "samples;sim"
  PASS_REGULAR_EXPRESSION "position 7: token 7 -> next [0-9]+")
add_test(NAME sample_argmax_tokens COMMAND $<TARGET_FILE:argmax> ${CMAKE_SOURCE_DIR}/models/gpt2_tiny.arch --backend ref
  --weights ${TESTS_DIR}/golden/gpt2_tiny.safetensors 5 17 200)
set_tests_properties(sample_argmax_tokens PROPERTIES LABELS "samples;ref"
  PASS_REGULAR_EXPRESSION "position 2: token 200 -> next [0-9]+")
add_test(NAME sample_argmax_bad COMMAND sh -c
  "out=$(\"$0\" \"$1\" 2>&1); rc=$?; echo \"$out\"; [ $rc -eq 1 ] && echo \"$out\" | grep -q '^argmax: .*no_such_model.arch'"
  $<TARGET_FILE:argmax> ${CMAKE_SOURCE_DIR}/models/no_such_model.arch)
set_tests_properties(sample_argmax_bad PROPERTIES LABELS samples)
