/*
 * toy_plan.h — a small hand-written plan (docs/plan.md) for the runtime's
 * unit tests, independent of the compiler: 4 weights (one transposed f16,
 * one bf16, one optional), the run-time scalars, one constant table, one
 * state tensor, one kernel and one program "forward" of a launch and a GEMM.
 */
#ifndef TOY_PLAN_H
#define TOY_PLAN_H

/* The toy's two steps; counter: the REF its launch reads and bumps (a state or a constant). */
#define TOY_STEPS(counter)                                                                              \
    "  {\"op\": \"launch\", \"kernel\": \"toy_embed\", \"grid\": [{\"t\": 1}, 1, 1], \"block\": [4, 1, 1], \"smem\": 0,\n" \
    "   \"args\": [{\"arena\": 0}, {\"weight\": 0}, {\"arena\": 64}, {\"int\": {\"t\": 1}}, {\"float\": 0.5}, " counter "],\n" \
    "   \"line\": 3, \"layer\": -1},\n"                                                                 \
    "  {\"op\": \"gemm\", \"transa\": \"T\", \"transb\": \"N\", \"m\": 8, \"n\": {\"t\": 1}, \"k\": 4,\n" \
    "   \"alpha\": 1.0, \"beta\": 0.0, \"A\": {\"weight\": 0}, \"lda\": 4, \"atype\": \"f32\",\n"       \
    "   \"B\": {\"arena\": 64}, \"ldb\": 4, \"btype\": \"f32\", \"C\": {\"arena\": 256}, \"ldc\": 8, \"ctype\": \"f32\",\n" \
    "   \"compute\": \"f32\", \"batch\": 1, \"strideA\": 0, \"strideB\": 0, \"strideC\": 0, \"line\": 7, \"layer\": -1}"

#define TOY_PLAN_JSON                                                                                   \
    "{\"format\": \"shortc-plan\", \"version\": 2, \"model\": \"toy\", \"source\": \"toy.arch\",\n"     \
    " \"config\": {\"vocab\": 8, \"d_model\": 4, \"n_heads\": 1, \"n_layers\": 1, \"segment\": 4},\n"    \
    " \"arena_bytes\": 512,\n"                                                                          \
    " \"tokens\": {\"arena\": 0},\n"                                                                    \
    " \"logits\": {\"arena\": 256, \"dtype\": \"f32\", \"shape\": [{\"t\": 1}, 8]},\n"                  \
    " \"buffers\": [],\n"                                                                               \
    " \"weights\": [\n"                                                                                 \
    "  {\"name\": \"wte.weight\", \"shape\": [8, 4], \"dtype\": \"f32\", \"file_shape\": [8, 4], \"transpose\": false, \"optional\": false},\n" \
    "  {\"name\": \"h.0.mlp.c_fc.weight\", \"shape\": [4, 6], \"dtype\": \"f16\", \"file_shape\": [6, 4], \"transpose\": true, \"optional\": false},\n" \
    "  {\"name\": \"ln_f.weight\", \"shape\": [4], \"dtype\": \"bf16\", \"file_shape\": [4], \"transpose\": false, \"optional\": false},\n" \
    "  {\"name\": \"ln_f.bias\", \"shape\": [4], \"dtype\": \"f32\", \"file_shape\": [4], \"transpose\": false, \"optional\": true}],\n" \
    " \"scalars\": [{\"name\": \"T\", \"min\": 1, \"max\": 4}, {\"name\": \"P\", \"min\": 0, \"max\": 15},\n" \
    "   {\"name\": \"fill\", \"min\": 0, \"max\": 15}, {\"name\": \"B\", \"min\": 1, \"max\": 1}],\n"     \
    " \"constants\": [{\"name\": \"toy.start\", \"dtype\": \"f32\", \"values\": [2.0, 0.5]}],\n"          \
    " \"state\": [{\"name\": \"kv.0\", \"role\": \"kv_cache\", \"shape\": [16], \"capacity\": 16, \"bytes\": 64,\n" \
    "   \"dtype\": \"f32\", \"persistent\": true}],\n"                                                   \
    " \"kernels\": [{\"name\": \"toy_embed\", \"barriers\": false, \"line\": 3, \"uses\": 1,\n"          \
    "   \"params\": [\"ptr\", \"ptr\", \"ptr\", \"int\", \"float\", \"ptr\"]}],\n"                   \
    " \"programs\": [{\"name\": \"forward\", \"t\": [1, 4], \"steps\": [\n"                             \
    TOY_STEPS("{\"state\": 0, \"offset\": 16}") "]}]}\n"

/* A second program for one token whose launch reads its counter from the constant table (not the state). */
#define TOY_DECODE_PROGRAM "{\"name\": \"decode\", \"t\": [1, 1], \"steps\": [\n" TOY_STEPS("{\"const\": 0}") "]}, "

#endif
