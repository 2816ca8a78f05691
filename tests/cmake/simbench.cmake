# The simulator as a CUDA test bench (tests/simbench/, docs/simulator.md):
# standard CUDA kernels run through `shortc sim`, their outputs compared with
# the NumPy results of tests/simbench/gen_expected.py (committed in data/),
# and kernels the simulator must report. Each case runs in its own directory.
set(SIMBENCH ${TESTS_DIR}/simbench)
set(SIMBENCH_DATA ${SIMBENCH}/data)

# shortc_simbench(NAME MODE EXPECT... -- SIM-ARGS...): see tests/simbench/run.sh.
function(shortc_simbench name)
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/simbench/${name})
  file(MAKE_DIRECTORY ${dir})
  add_test(NAME simbench_${name} COMMAND sh ${SIMBENCH}/run.sh ${SHORTC_BIN} ${ARGN} WORKING_DIRECTORY ${dir})
  set_tests_properties(simbench_${name} PROPERTIES LABELS "sim;simbench" TIMEOUT 300
                       ENVIRONMENT "SHORTC_CACHE=${CMAKE_BINARY_DIR}/test_cache")
endfunction()

# ---- results against NumPy ----
shortc_simbench(transpose exact ${SIMBENCH_DATA}/transpose_expected.npy --
  ${CMAKE_SOURCE_DIR}/examples/transpose.cu --kernel transpose --grid 3,2 --block 32,8 --unchecked
  --arg buf:${SIMBENCH_DATA}/transpose_zero.npy:out.npy --arg buf:${SIMBENCH_DATA}/transpose_in.npy --arg i32:70 --arg i32:45)
shortc_simbench(transpose_checked exact ${SIMBENCH_DATA}/transpose_expected.npy --
  ${CMAKE_SOURCE_DIR}/examples/transpose.cu --kernel transpose --grid 3,2 --block 32,8 --checked
  --arg buf:${SIMBENCH_DATA}/transpose_zero.npy:out.npy --arg buf:${SIMBENCH_DATA}/transpose_in.npy --arg i32:70 --arg i32:45)
shortc_simbench(reduce_sums exact ${SIMBENCH_DATA}/reduce_sums.npy --
  ${SIMBENCH}/reduce.cu --kernel block_sum --grid 4 --block 256 --smem 1028 --checked
  --arg buf:${SIMBENCH_DATA}/reduce_zero.npy:out.npy --arg buf:${SIMBENCH_DATA}/reduce_zero.npy
  --arg buf:${SIMBENCH_DATA}/reduce_in.npy --arg i32:1000)
shortc_simbench(reduce_counts exact ${SIMBENCH_DATA}/reduce_counts.npy --
  ${SIMBENCH}/reduce.cu --kernel block_sum --grid 4 --block 256 --smem 1028
  --arg buf:${SIMBENCH_DATA}/reduce_zero.npy --arg buf:${SIMBENCH_DATA}/reduce_zero.npy:out.npy
  --arg buf:${SIMBENCH_DATA}/reduce_in.npy --arg i32:1000)
shortc_simbench(shuffle exact ${SIMBENCH_DATA}/shuffle_expected.npy --
  ${SIMBENCH}/shuffle.cu --kernel shuffles --grid 2 --block 64
  --arg buf:${SIMBENCH_DATA}/shuffle_zero.npy:out.npy --arg buf:${SIMBENCH_DATA}/shuffle_in.npy --arg i32:128)
shortc_simbench(vote exact ${SIMBENCH_DATA}/vote_expected.npy --
  ${SIMBENCH}/vote.cu --kernel votes --grid 3 --block 16,4
  --arg buf:${SIMBENCH_DATA}/vote_zero.npy:out.npy --arg buf:${SIMBENCH_DATA}/vote_in.npy)
shortc_simbench(histogram exact ${SIMBENCH_DATA}/hist_expected.npy --
  ${SIMBENCH}/histogram.cu --kernel histogram --grid 4 --block 128
  --arg buf:${SIMBENCH_DATA}/hist_zero.npy:out.npy --arg buf:${SIMBENCH_DATA}/hist_in.npy --arg i32:5000)
shortc_simbench(convert exact ${SIMBENCH_DATA}/convert_expected.npy --
  ${SIMBENCH}/convert.cu --kernel convert --grid 3 --block 128
  --arg buf:${SIMBENCH_DATA}/convert_zero.npy:out.npy --arg buf:${SIMBENCH_DATA}/convert_in.npy --arg i32:300)
shortc_simbench(softmax close ${SIMBENCH_DATA}/softmax_expected.npy 1e-5 1e-7 --
  ${SIMBENCH}/softmax.cu --kernel softmax --grid 7 --block 128 --smem 16
  --arg buf:${SIMBENCH_DATA}/softmax_zero.npy:out.npy --arg buf:${SIMBENCH_DATA}/softmax_in.npy --arg i32:100)
# unchecked, a store one float past a 1001-float buffer stays in the allocation's own mapping
shortc_simbench(global_store_unchecked exact ${SIMBENCH_DATA}/fault_twos.npy --
  ${SIMBENCH}/faults.cu --kernel global_store --grid 1 --block 1002 --unchecked --arg buf:${SIMBENCH_DATA}/fault_1001.npy:out.npy)

# namespace-scope `extern __shared__ unsigned char raw[];` through reinterpret_cast<float *>
shortc_simbench(ns_extern_cast exact ${SIMBENCH_DATA}/fault_twos.npy --
  ${SIMBENCH}/ns_extern.cu --kernel ns_extern --grid 1 --block 1001 --smem 4004 --checked
  --arg buf:${SIMBENCH_DATA}/fault_1001.npy:out.npy --arg i32:1001)

# ---- kernels the simulator must report ----
set(F ${SIMBENCH}/faults.cu)
shortc_simbench(fault_divergent_barrier fault "kernel divergent_barrier: block (0,0,0)" "divergence" --
  ${F} --kernel divergent_barrier --grid 1 --block 32 --arg buf:${SIMBENCH_DATA}/fault_64.npy:out.npy)
shortc_simbench(fault_static_overrun fault "thread (32,0,0)" "0 bytes past the end of static shared array `s' (128 bytes, line 9, in static_overrun)" "faults.cu:10 in static_overrun" --
  ${F} --kernel static_overrun --grid 1 --block 33 --checked --arg buf:${SIMBENCH_DATA}/fault_64.npy:out.npy)
shortc_simbench(fault_static_overrun_unchecked fault "0 bytes past the end of static shared array `s'" --
  ${F} --kernel static_overrun --grid 1 --block 33 --unchecked --arg buf:${SIMBENCH_DATA}/fault_64.npy:out.npy)
shortc_simbench(fault_two_declarators fault "thread (32,0,0)" "0 bytes past the end of static shared array `a' (128 bytes" --
  ${F} --kernel two_declarators --grid 1 --block 33 --checked --arg buf:${SIMBENCH_DATA}/fault_64.npy:out.npy)
shortc_simbench(fault_dynamic_overrun fault "thread (0,0,0)" "0 bytes past the end of the 4004-byte dynamic shared memory" "faults.cu:19 in dynamic_overrun" --
  ${F} --kernel dynamic_overrun --grid 1 --block 1001 --smem 4004 --checked --arg buf:${SIMBENCH_DATA}/fault_64.npy:out.npy --arg i32:1001)
shortc_simbench(fault_global_store fault "kernel global_store: block (0,0,0), thread (1001,0,0)" "0 bytes past the end of allocation #1" "4004 bytes" "faults.cu:24 in global_store" --
  ${F} --kernel global_store --grid 1 --block 1002 --checked --arg buf:${SIMBENCH_DATA}/fault_1001.npy:out.npy)
shortc_simbench(fault_global_load fault "0 bytes past the end of allocation #2" "4004 bytes" "faults.cu:28 in global_load" --
  ${F} --kernel global_load --grid 1 --block 1 --checked --arg buf:${SIMBENCH_DATA}/fault_64.npy:out.npy
  --arg buf:${SIMBENCH_DATA}/fault_1001.npy --arg i32:1001)
shortc_simbench(fault_threads_limit fault "launch rejected: 2048 threads per block" "limit of 1024" --
  ${F} --kernel global_store --grid 1 --block 2048 --arg buf:${SIMBENCH_DATA}/fault_1001.npy:out.npy)
shortc_simbench(fault_block_dims fault "exceeds the block dimension limits" --
  ${F} --kernel global_store --grid 1 --block 1,1,128 --arg buf:${SIMBENCH_DATA}/fault_1001.npy:out.npy)
shortc_simbench(fault_smem_limit fault "200000 bytes of dynamic shared memory" "exceed the sm_80 limit" --
  ${F} --kernel dynamic_overrun --grid 1 --block 32 --smem 200000 --arg buf:${SIMBENCH_DATA}/fault_64.npy:out.npy --arg i32:1)

# ---- command-line errors ----
shortc_simbench(cli_unknown_kernel fault "no kernel `nope'; its kernels: divergent_barrier, static_overrun, dynamic_overrun, global_store, global_load, aligned_vector_load" --
  ${F} --kernel nope --grid 1 --block 1)
shortc_simbench(cli_no_kernel fault "no kernel named; its kernels: divergent_barrier" -- ${F} --grid 1 --block 1)
shortc_simbench(cli_arg_count fault "kernel global_load has 3 parameters but 1 argument was given" --
  ${F} --kernel global_load --grid 1 --block 1 --arg buf:${SIMBENCH_DATA}/fault_64.npy:out.npy)
shortc_simbench(cli_arg_kind fault "parameter 2 is int but argument 2 is a float32" --
  ${F} --kernel dynamic_overrun --grid 1 --block 1 --arg buf:${SIMBENCH_DATA}/fault_64.npy:out.npy --arg f32:1.5)
shortc_simbench(cli_bad_grid fault "--grid needs 1 to 3 positive integers" -- ${F} --kernel global_store --grid 1,0 --block 1)
shortc_simbench(cli_bad_arg fault "expected buf:IN.npy[:OUT.npy], i32:V, u32:V or f32:V" --
  ${F} --kernel global_store --grid 1 --block 1 --arg buffer:x.npy)
shortc_simbench(cli_bad_i32 fault "'3000000000' is not a valid i32 value" --
  ${F} --kernel dynamic_overrun --grid 1 --block 1 --arg buf:${SIMBENCH_DATA}/fault_64.npy --arg i32:3000000000)
shortc_simbench(cli_not_1d fault "fault_2d.npy: rank 2 is more than the 1 dimensions" --
  ${F} --kernel global_store --grid 1 --block 1 --arg buf:${SIMBENCH_DATA}/fault_2d.npy)
shortc_simbench(cli_missing_npy fault "--arg 1: cannot open" "missing.npy" --
  ${F} --kernel global_store --grid 1 --block 1 --arg buf:${SIMBENCH_DATA}/missing.npy)
shortc_simbench(cli_directory fault "Is a directory" -- ${SIMBENCH} --kernel k --grid 1 --block 1)
# x86-64 reports a misaligned aligned-vector load as a general-protection fault without an address
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  shortc_simbench(fault_misaligned_vector fault "general protection fault (a misaligned vector access" "faults.cu:34 in aligned_vector_load" --
    ${F} --kernel aligned_vector_load --grid 1 --block 8 --checked --arg buf:${SIMBENCH_DATA}/fault_64.npy:out.npy
    --arg buf:${SIMBENCH_DATA}/fault_1001.npy)
endif()

# ---- checked mode below an object (tests/simbench/underruns.cu): per-access checks, byte-exact ----
set(U ${SIMBENCH}/underruns.cu)
shortc_simbench(fault_global_underrun fault "thread (0,0,0)" "a 4-byte write" "4 bytes before the start of allocation #1" "4004 bytes" "underruns.cu:7 in global_underrun" --
  ${U} --kernel global_underrun --grid 1 --block 4 --checked --arg buf:${SIMBENCH_DATA}/fault_1001.npy:out.npy)
shortc_simbench(fault_global_byte_underrun fault "a 1-byte read" "1 bytes before the start of allocation #2" "4004 bytes" "underruns.cu:11 in global_byte_underrun" --
  ${U} --kernel global_byte_underrun --grid 1 --block 1 --checked --arg buf:${SIMBENCH_DATA}/fault_64.npy:out.npy
  --arg buf:${SIMBENCH_DATA}/fault_1001.npy --arg i32:-1)
shortc_simbench(fault_static_underrun fault "thread (0,0,0)" "4 bytes before the start of static shared array `s' (128 bytes, line 15, in static_underrun)" "underruns.cu:16 in static_underrun" --
  ${U} --kernel static_underrun --grid 1 --block 32 --checked --arg buf:${SIMBENCH_DATA}/fault_64.npy:out.npy)
shortc_simbench(fault_dynamic_underrun fault "thread (0,0,0)" "a 4-byte read" "4 bytes before the start of the 128-byte dynamic shared memory" "underruns.cu:25 in dynamic_underrun" --
  ${U} --kernel dynamic_underrun --grid 1 --block 32 --smem 128 --checked --arg buf:${SIMBENCH_DATA}/fault_64.npy:out.npy --arg i32:32)
# every width up to the last byte of each object: no report, the NumPy result
shortc_simbench(checked_in_bounds exact ${SIMBENCH_DATA}/in_bounds_expected.npy --
  ${U} --kernel in_bounds --grid 1 --block 33 --smem 132 --checked --arg buf:${SIMBENCH_DATA}/reduce_in.npy:out.npy --arg i32:1000)
shortc_simbench(fault_atomic_underrun fault "4 bytes before the start of allocation #1" "underruns.cu:54 in atomic_underrun" --
  ${U} --kernel atomic_underrun --grid 1 --block 1 --checked --arg buf:${SIMBENCH_DATA}/fault_1001.npy:out.npy --arg i32:-1)
# a checked fault names the access's own line, not the next statement's (the hook's call site, not its return address)
shortc_simbench(fault_multiline_line fault "4 bytes before the start of allocation #1" "underruns.cu:59 in multiline_underrun" --
  ${U} --kernel multiline_underrun --grid 1 --block 4 --checked --arg buf:${SIMBENCH_DATA}/fault_1001.npy:out.npy)

# ---- checked mode, the default: shared-memory hazards (tests/simbench/hazards.cu) ----
set(H ${SIMBENCH}/hazards.cu)
set(H_IN buf:${SIMBENCH_DATA}/fault_64.npy:out.npy)
shortc_simbench(hazard_raw fault "thread (1,0,0)" "data race on shared memory: a 4-byte read" "byte 0 of static shared array `s' (line 7)"
  "hazards.cu:10 in race_raw" "and thread (0,0,0)" "hazards.cu:9 in race_raw" "wrote it with no __syncthreads() between" --
  ${H} --kernel race_raw --grid 1 --block 64 --arg ${H_IN})
shortc_simbench(hazard_war fault "thread (1,0,0)" "data race on shared memory: a 4-byte write" "hazards.cu:20 in race_war"
  "byte 4 of static shared array `s' (line 14)" "and thread (0,0,0)" "hazards.cu:19 in race_war" "read it with no __syncthreads() between" -- ${H} --kernel race_war --grid 1 --block 64 --arg ${H_IN})
shortc_simbench(hazard_waw fault "thread (1,0,0)" "a 4-byte write" "byte 0 of the 128-byte dynamic shared memory"
  "hazards.cu:28 in race_waw" "and thread (0,0,0)" "hazards.cu:28 in race_waw" -- ${H} --kernel race_waw --grid 1 --block 64 --smem 128 --arg ${H_IN})
shortc_simbench(hazard_uninit fault "read of uninitialised shared memory: a 4-byte read" "of static shared array `s' (line 34)"
  "hazards.cu:38 in uninit_read" "no thread of the block has written it" -- ${H} --kernel uninit_read --grid 1 --block 64 --arg ${H_IN})
shortc_simbench(hazard_shuffle fault "__shfl_sync (line 44) with mask 0x0000ffff: lane 0 reads lane 16, which is not in the mask" --
  ${H} --kernel shuffle_outside_mask --grid 1 --block 64 --arg ${H_IN})
# exact bounds by default: one float past a 132-byte array (inside its rounding to 144), the last page of a buffer
shortc_simbench(hazard_static_rounding fault "thread (33,0,0)" "0 bytes past the end of static shared array `s' (132 bytes" --
  ${H} --kernel static_rounding --grid 1 --block 34 --arg ${H_IN})
shortc_simbench(default_global_store fault "thread (1001,0,0)" "0 bytes past the end of allocation #1" --
  ${F} --kernel global_store --grid 1 --block 1002 --arg buf:${SIMBENCH_DATA}/fault_1001.npy:out.npy)
shortc_simbench(default_dynamic_underrun fault "4 bytes before the start of the 128-byte dynamic shared memory" --
  ${U} --kernel dynamic_underrun --grid 1 --block 32 --smem 128 --arg buf:${SIMBENCH_DATA}/fault_64.npy:out.npy --arg i32:32)
# ... and nothing reported where there is no hazard; --unchecked misses them (the old page-level guards)
shortc_simbench(hazard_none exact ${SIMBENCH_DATA}/fault_64.npy -- ${H} --kernel race_free --grid 1 --block 64 --arg ${H_IN})
shortc_simbench(hazard_unchecked exact ${SIMBENCH_DATA}/fault_64.npy --
  ${H} --kernel race_war --grid 1 --block 64 --unchecked --arg ${H_IN})
