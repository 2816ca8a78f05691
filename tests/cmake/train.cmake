# Training, first stage (issue 25; docs/training.md): reverse mode in the reference interpreter, the
# runtime's AdamW/SGD trainer, `shortc train` and `shortc grad`.
#   train_grad_<model>         (gpt2_tiny and its sibling of every sparse mask kind) every weight's gradient from `shortc grad` equals PyTorch autograd on the same
#                              weights and tokens (an independent float64 forward; sparse kinds through the
#                              mask goldens of tests/attention/gen_masks.py) to 1e-5 of the tensor's largest
#                              entry, for one sequence and a batch of three (tests/train/torch_check.py)
#   train_grad_golden_<model>  the same for the golden models of tests/gen_goldens.py with its own forward
#                              (RMSNorm post-norm and fp16 storage, sinusoidal positions and ReLU)
#   train_adamw, train_sgd     5 steps equal torch.optim.AdamW (warm-up + cosine, clip_grad_norm_, weight
#                              decay) or SGD (momentum, weight decay, inverse-sqrt) step by step
#   train_fd_baseline_ba_adaptive_tiny  adaptive input and softmax (tied projections stored in two layouts)
#                              against central finite differences of the loss (tests/train/fd_check.py)
#   train_loss, train_freeze, train_errors   the command line: the loss falls over 30 steps and the saved
#                              weights load back; --freeze leaves tensors bitwise unchanged; bad flags and
#                              inputs are refused with clear messages (tests/train/cli_check.py)
set(TRAIN_DIR ${TESTS_DIR}/train)
if(PY3)
  foreach(m gpt2_tiny local_tiny longformer_lm_tiny sparse_strided_tiny sparse_fixed_tiny bigbird_lm_tiny gaussian_tiny)
    add_test(NAME train_grad_${m} COMMAND ${PY3} ${TRAIN_DIR}/torch_check.py ${SHORTC_BIN} grad ${m})
    set_tests_properties(train_grad_${m} PROPERTIES LABELS train SKIP_RETURN_CODE 77 TIMEOUT 300)
  endforeach()
  foreach(m baseline_ba_tiny mixed_tiny llama_tiny neox_tiny geglu_tiny_half)
    add_test(NAME train_grad_golden_${m} COMMAND ${PY3} ${TRAIN_DIR}/torch_check.py ${SHORTC_BIN} grad-golden ${m})
    set_tests_properties(train_grad_golden_${m} PROPERTIES LABELS train SKIP_RETURN_CODE 77 TIMEOUT 300)
  endforeach()
  foreach(c adamw sgd)
    add_test(NAME train_${c} COMMAND ${PY3} ${TRAIN_DIR}/torch_check.py ${SHORTC_BIN} ${c})
    set_tests_properties(train_${c} PROPERTIES LABELS train SKIP_RETURN_CODE 77 TIMEOUT 300)
  endforeach()
endif()
find_program(TRAIN_PY python3)
if(TRAIN_PY)
  add_test(NAME train_fd_baseline_ba_adaptive_tiny
           COMMAND ${TRAIN_PY} ${TRAIN_DIR}/fd_check.py ${SHORTC_BIN} ${CMAKE_SOURCE_DIR}/models/adaptive/baseline_ba_adaptive_tiny.arch)
  set_tests_properties(train_fd_baseline_ba_adaptive_tiny PROPERTIES LABELS train TIMEOUT 300)
  foreach(c loss freeze errors)
    add_test(NAME train_${c} COMMAND ${TRAIN_PY} ${TRAIN_DIR}/cli_check.py ${SHORTC_BIN} ${c})
    set_tests_properties(train_${c} PROPERTIES LABELS "train;cli" TIMEOUT 300)
  endforeach()
endif()
