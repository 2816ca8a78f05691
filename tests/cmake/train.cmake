# Training, first stage (issue 25; docs/training.md): reverse mode in the reference interpreter, the
# runtime's AdamW/SGD trainer, `shortc train` and `shortc grad`.
#   train_grad_<model>         (gpt2_tiny, its sibling of every sparse mask kind, and shortformer_tiny's
#                              position-infused attention as sequences of 16 and 12) every weight's gradient from `shortc grad` equals PyTorch autograd on the same
#                              weights and tokens (an independent float64 forward; sparse kinds through the
#                              mask goldens of tests/attention/gen_masks.py) to 1e-5 of the tensor's largest
#                              entry, for one sequence and a batch of three (tests/train/torch_check.py)
#   train_grad_txl_{tiny,lrm_tiny,tiny_pre}  Transformer-XL (relative attention, memories with a stop-gradient
#                              between segments, long- and short-range memories, pre-norm with clamp and
#                              same_length) against autograd through tests/memory/gen_txl.py's forward, for
#                              sequences of one and of three segments (tests/train/txl_check.py)
#   train_grad_golden_<model>  the same for the golden models of tests/gen_goldens.py with its own forward
#                              (RMSNorm post-norm and fp16 storage, sinusoidal positions and ReLU; llama_tiny's
#                              SwiGLU gate epilogue and bias-free GEMMs, neox_tiny's parallel blocks)
#   train_adamw, train_sgd     5 steps equal torch.optim.AdamW (warm-up + cosine, clip_grad_norm_, weight
#                              decay) or SGD (momentum, weight decay, inverse-sqrt) step by step
#   train_fd_baseline_ba_adaptive_tiny  adaptive input and softmax (tied projections stored in two layouts)
#                              against central finite differences of the loss (tests/train/fd_check.py)
#   train_loss, train_freeze, train_errors   the command line: the loss falls over 30 steps and the saved
#                              weights load back; --freeze leaves tensors bitwise unchanged; bad flags and
#                              inputs are refused with clear messages (tests/train/cli_check.py)
#   train_stages, train_fairseq, train_valid, train_scaling   second stage: --stages switches the length at
#                              the right step; --schedule fairseq is fairseq's inverse_sqrt; --valid equals
#                              `shortc eval` of the saved weights; --loss-scale skips and backs off as
#                              GradScaler (cli_check.py)
set(TRAIN_DIR ${TESTS_DIR}/train)
if(PY3)
  foreach(m gpt2_tiny local_tiny longformer_lm_tiny sparse_strided_tiny sparse_fixed_tiny bigbird_lm_tiny gaussian_tiny
            shortformer_tiny)
    add_test(NAME train_grad_${m} COMMAND ${PY3} ${TRAIN_DIR}/torch_check.py ${SHORTC_BIN} grad ${m})
    set_tests_properties(train_grad_${m} PROPERTIES LABELS train SKIP_RETURN_CODE 77 TIMEOUT 300)
  endforeach()
  foreach(m baseline_ba_tiny mixed_tiny llama_tiny neox_tiny)
    add_test(NAME train_grad_golden_${m} COMMAND ${PY3} ${TRAIN_DIR}/torch_check.py ${SHORTC_BIN} grad-golden ${m})
    set_tests_properties(train_grad_golden_${m} PROPERTIES LABELS train SKIP_RETURN_CODE 77 TIMEOUT 300)
  endforeach()
  foreach(m txl_tiny txl_lrm_tiny txl_tiny_pre)
    add_test(NAME train_grad_${m} COMMAND ${PY3} ${TRAIN_DIR}/txl_check.py ${SHORTC_BIN} ${m})
    set_tests_properties(train_grad_${m} PROPERTIES LABELS train SKIP_RETURN_CODE 77 TIMEOUT 300)
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
  foreach(c loss freeze errors stages fairseq valid scaling)
    add_test(NAME train_${c} COMMAND ${TRAIN_PY} ${TRAIN_DIR}/cli_check.py ${SHORTC_BIN} ${c})
    set_tests_properties(train_${c} PROPERTIES LABELS "train;cli" TIMEOUT 300)
  endforeach()
endif()
