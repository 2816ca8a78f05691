# Issue 9 on the device: the loss of evaluation and the sampling of generation as kernels, batched generate.
#
#   loss_kernel         the emitted loss kernel (templates/loss.cuh) on the simulator against -log softmax in
#                       double on rows a naive softmax overflows on, -inf entries and an unscored row, for a
#                       vocabulary using 128-bit loads (gpt2_tiny, 256), an odd one (tok_tiny, 377) and an
#                       adaptive softmax (LOGPROB: its logits are log-probabilities) (tests/modes/test_loss_kernel.c;
#                       modes_sim shows that srt_eval_nll copies one float per token, adaptive_eval_* that eval
#                       of an adaptive model on sim equals ref)
add_executable(test_loss_kernel ${TESTS_DIR}/modes/test_loss_kernel.c)
target_link_libraries(test_loss_kernel PRIVATE shortc_core shortrt PkgConfig::CJSON m)
target_include_directories(test_loss_kernel PRIVATE ${TESTS_DIR})
add_test(NAME loss_kernel COMMAND test_loss_kernel ${CMAKE_SOURCE_DIR}/models/gpt2_tiny.arch
         ${TESTS_DIR}/tokenizer/tok_tiny.arch ${CMAKE_SOURCE_DIR}/models/adaptive/baseline_ba_adaptive_tiny.arch)
set_tests_properties(loss_kernel PROPERTIES LABELS "modes;sim" TIMEOUT 300)
#   device_sampler      srt_forward_sample (templates/sample.cuh on the simulator) draws the same tokens as the
#                       host sampler and ref for every combination of temperature, top-k, top-p and two seeds;
#                       greedy is argmax; one token id per step comes back; a batch of prompts of different
#                       lengths draws what each draws alone (tests/modes/test_device_sampler.c)
add_executable(test_device_sampler ${TESTS_DIR}/modes/test_device_sampler.c)
target_link_libraries(test_device_sampler PRIVATE shortrt)
target_include_directories(test_device_sampler PRIVATE ${TESTS_DIR})
add_test(NAME device_sampler COMMAND test_device_sampler ${TESTS_DIR}/tokenizer/tok_tiny.arch)
set_tests_properties(device_sampler PROPERTIES LABELS "modes;sim" TIMEOUT 600)
#   generate_batch      `shortc generate` over a batch of prompts of different lengths (--prompts, repeated
#                       --prompt): one line per prompt equal to the prompt run alone, greedy and sampled, on
#                       sim and ref; --eos per sequence; tokens/s; bytes from the device; errors
#                       (tests/modes/generate_batch.sh)
add_test(NAME generate_batch COMMAND sh ${TESTS_DIR}/modes/generate_batch.sh ${SHORTC_BIN} ${TESTS_DIR})
set_tests_properties(generate_batch PROPERTIES LABELS "cli;modes" TIMEOUT 600)
#   device_sampler_50k  the same at GPT-2's vocabulary of 50257 (tests/modes/sample_50k.arch, --large):
#                       top-k small and large, top-p alone, plain temperature; prints the simulator time
add_test(NAME device_sampler_50k COMMAND test_device_sampler ${TESTS_DIR}/modes/sample_50k.arch --large)
set_tests_properties(device_sampler_50k PROPERTIES LABELS "modes;sim" TIMEOUT 600
                     ENVIRONMENT "SHORTC_CACHE=${CMAKE_BINARY_DIR}/test_cache")
#   generate_serve      `shortc generate --prompts FILE --max-batch 2` (continuous batching): 5 prompts on 2
#                       slots give the plain batch's lines, greedy, sampled and with --eos, on sim and ref;
#                       prefill / decode throughput on stderr and in --json; --report's rows per pass
#                       (tests/modes/generate_serve.sh)
add_test(NAME generate_serve COMMAND sh ${TESTS_DIR}/modes/generate_serve.sh ${SHORTC_BIN} ${TESTS_DIR})
set_tests_properties(generate_serve PROPERTIES LABELS "cli;modes" TIMEOUT 600)
