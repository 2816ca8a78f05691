/* PLACEHOLDER: replaced wholesale by the owner of this file. */
#include "shortrt.h"
#include <string.h>
void srt_options_init(srt_options *o) { memset(o, 0, sizeof *o); o->sim_checked = 1; }
srt_status srt_context_create(srt_context **out, srt_alloc_fn a, void *ud) { (void)a; (void)ud; *out = NULL; return SRT_ERR_UNSUPPORTED; }
void srt_context_destroy(srt_context *c) { (void)c; }
const char *srt_last_error(const srt_context *c) { (void)c; return "runtime placeholder"; }
const char *srt_status_name(srt_status s) { (void)s; return "?"; }
const char *srt_backend_name(srt_backend b) { (void)b; return "?"; }
srt_status srt_model_open(srt_context *c, const char *p, const srt_options *o, srt_model **out) { (void)c; (void)p; (void)o; *out = NULL; return SRT_ERR_UNSUPPORTED; }
void srt_model_close(srt_model *m) { (void)m; }
srt_status srt_model_load_weights(srt_model *m, const char *p) { (void)m; (void)p; return SRT_ERR_UNSUPPORTED; }
srt_status srt_model_random_weights(srt_model *m, uint64_t s) { (void)m; (void)s; return SRT_ERR_UNSUPPORTED; }
srt_status srt_model_get_info(const srt_model *m, srt_model_info *i) { (void)m; (void)i; return SRT_ERR_UNSUPPORTED; }
const char *srt_model_plan_json(const srt_model *m) { (void)m; return ""; }
srt_status srt_session_create(srt_model *m, int b, srt_session **out) { (void)m; (void)b; *out = NULL; return SRT_ERR_UNSUPPORTED; }
void srt_session_destroy(srt_session *s) { (void)s; }
srt_status srt_session_reset(srt_session *s) { (void)s; return SRT_ERR_UNSUPPORTED; }
size_t srt_session_state_bytes(const srt_session *s) { (void)s; return 0; }
srt_status srt_forward(srt_session *s, const int32_t *t, int n, float *l) { (void)s; (void)t; (void)n; (void)l; return SRT_ERR_UNSUPPORTED; }
srt_status srt_npy_write_f32(srt_context *c, const char *p, const float *d, const int64_t *s, int r) { (void)c; (void)p; (void)d; (void)s; (void)r; return SRT_ERR_UNSUPPORTED; }
srt_status srt_npy_read_f32(srt_context *c, const char *p, float **d, int64_t *s, int *r) { (void)c; (void)p; (void)d; (void)s; (void)r; return SRT_ERR_UNSUPPORTED; }
void srt_free(srt_context *c, void *p) { (void)c; (void)p; }
