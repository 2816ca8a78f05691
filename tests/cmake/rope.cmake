# Rotary and ALiBi positions and grouped-query attention (issue 22) on the
# reference backend and on the simulator (the kernels), against the goldens of tests/gen_goldens_rope.py (HF
# transformers 4.38.2's Llama / Mistral / GPT-NeoX where it has the model, an
# independent PyTorch forward for YaRN, Llama 3.1 scaling, interleaved pairs
# and ALiBi). Each model runs as one forward (rope_ref_M), one token per call
# (rope_decode_M: every query after the first reads the KV cache, P > 0) and
# five tokens per call. Dynamic NTK scaling depends on each call's length, so
# chunked runs are compared with HF decoding one and five tokens per call
# through its own KV cache (M.chunk1/.chunk5.logits.npy). fp32: 1e-4; bf16
# storage (llama_rope_yarn_half_tiny: the tensor-core path): 2e-2.
set(ROPE_MODELS llama_rope_tiny:llama_rope_tiny llama_rope_tiny:llama_rope_linear_tiny
    llama_rope_tiny:llama_rope_dynamic_tiny llama_rope_tiny:llama_rope_yarn_tiny
    llama_rope_tiny:llama_rope_llama3_tiny llama_rope_tiny:llama_rope_mqa_tiny llama_rope_tiny:llama_rope_yarn_half_tiny
    mistral_tiny:mistral_tiny
    neox_rope_tiny:neox_rope_tiny alibi_tiny:alibi_tiny)
foreach(pair ${ROPE_MODELS})
  string(REPLACE ":" ";" pair "${pair}")
  list(GET pair 0 file)
  list(GET pair 1 model)
  set(tol 1e-4)
  if(model MATCHES "_half_")
    set(tol 2e-2)  # bf16 weights, activations and KV cache
  endif()
  set(expect_decode ${model}.logits.npy)
  set(expect_chunked ${model}.logits.npy)
  if(model STREQUAL "llama_rope_dynamic_tiny")
    set(expect_decode ${model}.chunk1.logits.npy)
    set(expect_chunked ${model}.chunk5.logits.npy)
  endif()
  # ref: rope_{ref,decode,chunk5}_M; sim (the kernels: kv_write rotates, ALiBi's _extra, K/V head h/(H/G)):
  # rope_sim_{whole,decode,chunk5}_M
  foreach(backend ref sim)
    foreach(run "ref:0:${model}.logits.npy" "decode:1:${expect_decode}" "chunk5:5:${expect_chunked}")
      string(REPLACE ":" ";" run "${run}")
      list(GET run 0 tag)
      list(GET run 1 chunk)
      list(GET run 2 expect)
      set(name rope_${tag}_${model})
      if(backend STREQUAL "sim")
        string(REPLACE "ref" "whole" tag "${tag}")
        set(name rope_sim_${tag}_${model})
      endif()
      set(out ${CMAKE_CURRENT_BINARY_DIR}/${name}.logits.npy)
      add_test(NAME ${name}
               COMMAND sh -c "c=''; [ $6 = 0 ] || c=\"--chunk $6\"; \"$1\" run \"$2/models/$3.arch\" --model $4 --backend ${backend} --weights \"$5/$4.safetensors\" --tokens \"$5/$4.tokens\" --logits \"$7\" $c --quiet && \"$1\" cmp \"$7\" \"$5/$8\" --atol $9 --rtol $9"
                       rope ${SHORTC_BIN} ${CMAKE_SOURCE_DIR} ${file} ${model} ${TESTS_DIR}/golden ${chunk} ${out} ${expect} ${tol})
      set_tests_properties(${name} PROPERTIES LABELS ${backend})
    endforeach()
  endforeach()
endforeach()

# ALiBi on the tensor-core path (attn_mma.cuh's _extra): alibi_half_tiny, fp16 with a bf16 cache, against
# alibi_tiny's goldens at 2e-2 on sim and ref; whole, one token per call (the decode kernels, P > 0) and five
# per call. (alibi_tiny itself runs on sim in the loop above.)
foreach(spec "alibi_half_tiny:sim:2e-2" "alibi_half_tiny:ref:2e-2")
  string(REPLACE ":" ";" spec "${spec}")
  list(GET spec 0 model)
  list(GET spec 1 backend)
  list(GET spec 2 tol)
  foreach(run "whole:0" "decode:1" "chunk5:5")
    string(REPLACE ":" ";" run "${run}")
    list(GET run 0 tag)
    list(GET run 1 chunk)
    set(out ${CMAKE_CURRENT_BINARY_DIR}/alibi_${backend}_${tag}_${model}.logits.npy)
    add_test(NAME alibi_${backend}_${tag}_${model}
             COMMAND sh -c "c=''; [ $5 = 0 ] || c=\"--chunk $5\"; \"$1\" run \"$2/models/$3.arch\" --model $3 --backend $6 --weights \"$4/alibi_tiny.safetensors\" --tokens \"$4/alibi_tiny.tokens\" --logits \"$7\" $c --quiet && \"$1\" cmp \"$7\" \"$4/alibi_tiny.logits.npy\" --atol $8 --rtol $8"
                     alibi ${SHORTC_BIN} ${CMAKE_SOURCE_DIR} ${model} ${TESTS_DIR}/golden ${chunk} ${backend} ${out} ${tol})
    set_tests_properties(alibi_${backend}_${tag}_${model} PROPERTIES LABELS ${backend})
  endforeach()
endforeach()

# Grouped K/V heads in the kernels (kv_write's G heads, every attention kernel's K/V head h / (H / G)) on the
# simulator against the interpreter (its grouped heads held to HF by llama_rope_tiny's goldens above), on the
# same random weights: gqa_tiny (G = 2), gqa_mqa_thd_tiny (G = 1, cache [tokens, heads, dim]) at 1e-4 on the
# CUDA-core engine, gqa_half_tiny (fp16, bf16 cache: the tensor-core path) at 2e-2; whole, one token per call
# (the decode kernels, P > 0) and five per call, each against the interpreter's whole forward.
foreach(spec "gqa_tiny:gqa_tiny:1e-4" "gqa_tiny:gqa_mqa_thd_tiny:1e-4" "gqa_half_tiny:gqa_half_tiny:2e-2")
  string(REPLACE ":" ";" spec "${spec}")
  list(GET spec 0 file)
  list(GET spec 1 model)
  list(GET spec 2 tol)
  set(want ${CMAKE_CURRENT_BINARY_DIR}/gqa_ref_${model}.logits.npy)
  foreach(run "whole:0" "decode:1" "chunk5:5")
    string(REPLACE ":" ";" run "${run}")
    list(GET run 0 tag)
    list(GET run 1 chunk)
    set(out ${CMAKE_CURRENT_BINARY_DIR}/gqa_sim_${tag}_${model}.logits.npy)
    add_test(NAME gqa_sim_${tag}_${model}
             COMMAND sh -c "c=''; [ $5 = 0 ] || c=\"--chunk $5\"; a=\"$2/models/$3.arch --model $4 --random-weights 1 --tokens $6/llama_tiny.tokens --quiet\"; \"$1\" run $a --backend ref --logits \"$7\" && \"$1\" run $a --backend sim --logits \"$8\" $c && \"$1\" cmp \"$8\" \"$7\" --atol $9 --rtol $9"
                     gqa ${SHORTC_BIN} ${CMAKE_SOURCE_DIR} ${file} ${model} ${chunk} ${TESTS_DIR}/golden ${want}_${tag} ${out} ${tol})
    set_tests_properties(gqa_sim_${tag}_${model} PROPERTIES LABELS sim)
  endforeach()
endforeach()

# The goldens are reproducible (needs torch, and HF transformers in /opt/shortc-hf; skipped without them).
if(PY3 AND EXISTS /opt/shortc-hf/transformers)
  add_test(NAME rope_goldens_reproducible COMMAND ${PY3} ${TESTS_DIR}/gen_goldens_rope.py --check)
  set_tests_properties(rope_goldens_reproducible PROPERTIES LABELS ref SKIP_RETURN_CODE 77
                       ENVIRONMENT "PYTHONPATH=/opt/shortc-hf")
endif()
