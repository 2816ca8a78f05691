/*
 * names.c — spellings of the enums in shortc.h (the dtypes' are in
 * common/dtype.c).
 */
#include "shortc.h"

const char *activation_name(Activation a) {
    switch (a) {
    case ACT_NONE: return "none";
    case ACT_RELU: return "relu";
    case ACT_GELU: return "gelu";
    case ACT_GELU_TANH: return "gelu_tanh";
    case ACT_SILU: return "silu";
    }
    return "?";
}

const char *norm_kind_name(NormKind k) {
    switch (k) {
    case NORM_LAYERNORM: return "layernorm";
    case NORM_RMSNORM: return "rmsnorm";
    }
    return "?";
}

const char *norm_place_name(NormPlace p) {
    switch (p) {
    case NORM_PRE: return "pre";
    case NORM_POST: return "post";
    }
    return "?";
}

const char *adaptive_style_name(AdaptiveStyle s) {
    switch (s) {
    case ADAPTIVE_NONE: return "none";
    case ADAPTIVE_FAIRSEQ: return "fairseq";
    case ADAPTIVE_TXL: return "transformer_xl";
    }
    return "?";
}

const char *pos_kind_name(PosKind p) {
    switch (p) {
    case POS_NONE: return "none";
    case POS_SINUSOIDAL: return "sinusoidal";
    case POS_LEARNED: return "learned";
    case POS_ROPE: return "rope";
    case POS_ALIBI: return "alibi";
    }
    return "?";
}

const char *rope_scaling_name(RopeScaling k) {
    switch (k) {
    case ROPE_SCALE_NONE: return "none";
    case ROPE_SCALE_LINEAR: return "linear";
    case ROPE_SCALE_DYNAMIC: return "dynamic";
    case ROPE_SCALE_YARN: return "yarn";
    case ROPE_SCALE_LLAMA3: return "llama3";
    }
    return "?";
}

static const char *const attn_names[] = {
#define X(e, name) name,
    SHORTC_ATTN_KINDS(X)
#undef X
};
const char *attn_kind_name(AttnKind k) { return (unsigned)k < ATTN_COUNT ? attn_names[k] : "?"; }

const char *dim_order_name(DimOrder o) {
    switch (o) {
    case ORD_IN_OUT: return "[in,out]";
    case ORD_OUT_IN: return "[out,in]";
    case ORD_TOKENS_CHANNELS: return "[tokens,channels]";
    case ORD_TOKENS_HEADS_DIM: return "[tokens,heads,dim]";
    case ORD_HEADS_TOKENS_DIM: return "[heads,tokens,dim]";
    }
    return "?";
}

const char *pia_style_name(PiaStyle p) {
    switch (p) {
    case PIA_NONE: return "none";
    case PIA_FAIRSEQ: return "fairseq";
    case PIA_VASWANI: return "vaswani";
    }
    return "?";
}
