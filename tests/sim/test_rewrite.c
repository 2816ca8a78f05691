/*
 * test_rewrite.c — the simulator's shared-memory source pass and kernel scan
 * (runtime/sim/sim_rewrite.c): which declarations are rewritten into what,
 * what is left alone, and that line numbers are kept.
 */
#include "sim_test.h"

/* The pass's output for src (static, overwritten by the next call). */
static const char *rw(const char *src, int *nstatic) {
    static char *last;
    free(last);
    size_t n = 0;
    last = sim_rewrite_shared(src, strlen(src), &n, nstatic);
    CHECK(last && strlen(last) == n);
    return last ? last : "";
}

static int count_lines(const char *s) {
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

static void test_forms(void) {
    int ns = -1;
    const char *o = rw("__global__ void k(float *o) {\n  __shared__ float tile[32][33];\n  extern __shared__ float buf[];\n}\n", &ns);
    CHECK_HAS(o, "SHORTSIM_STATIC_SHARED(0, 1, tile, \"tile\", float [32][33]);");
    CHECK_HAS(o, "SHORTSIM_EXTERN_SHARED(buf, float);");
    CHECK(ns == 1);
    /* qualifiers before and after __shared__, alignment, a scalar; numbering in order */
    o = rw("void f() { volatile __shared__ int flag; __shared__ __align__(16) unsigned char b[10]; "
           "extern __shared__ __align__(8) double d[]; }",
           &ns);
    CHECK_HAS(o, "SHORTSIM_STATIC_SHARED(0, 1, flag, \"flag\", volatile int );");
    CHECK_HAS(o, "SHORTSIM_STATIC_SHARED(1, 16, b, \"b\", unsigned char [10]);");
    CHECK_HAS(o, "SHORTSIM_EXTERN_SHARED(d, double);");
    CHECK(ns == 2);
    /* namespace scope, also inside a namespace and extern "C" blocks */
    o = rw("extern __shared__ float dyn[];\nnamespace a { __shared__ float t[4]; }\nextern \"C\" { __shared__ int u[2]; }\n"
           "__shared__ int scalar;\n",
           &ns);
    CHECK_HAS(o, "SHORTSIM_EXTERN_SHARED_NS(dyn, float);");
    CHECK_HAS(o, "SHORTSIM_STATIC_SHARED_NS(0, 1, t, \"t\", float [4]);");
    CHECK_HAS(o, "SHORTSIM_STATIC_SHARED_NS(1, 1, u, \"u\", int [2]);");
    CHECK_HAS(o, "__shared__ int scalar;"); /* a namespace-scope scalar stays thread-local */
    /* later uses of a namespace-scope extern are a plain pointer (reinterpret_cast works); members are not */
    o = rw("extern __shared__ unsigned char raw[];\nvoid f() { float *p = reinterpret_cast<float *>(raw); s.raw = 1; q->raw = 2; }\n",
           &ns);
    CHECK_HAS(o, "reinterpret_cast<float *>((shortsim::dyn_smem< unsigned char>()))");
    CHECK_HAS(o, "s.raw = 1; q->raw = 2;");
    /* nested namespace names; a function body inside a namespace is block scope */
    o = rw("namespace a::b { __shared__ float t[4]; __device__ void f() { __shared__ float v[2]; } }", &ns);
    CHECK_HAS(o, "SHORTSIM_STATIC_SHARED_NS(0, 1, t, \"t\", float [4]);");
    CHECK_HAS(o, "SHORTSIM_STATIC_SHARED(1, 1, v, \"v\", float [2]);");
    /* several declarators: one slot each, sharing the type and alignment, on the same line */
    o = rw("void f() {\n  __shared__ __align__(16) float a[32], b[8][4],\n    c;\n}\n", &ns);
    CHECK_HAS(o, "SHORTSIM_STATIC_SHARED(0, 16, a, \"a\", float [32]);");
    CHECK_HAS(o, "SHORTSIM_STATIC_SHARED(1, 16, b, \"b\", float [8][4]);");
    CHECK_HAS(o, "SHORTSIM_STATIC_SHARED(2, 16, c, \"c\", float );");
    CHECK(ns == 3 && count_lines(o) == 4);
}

static void test_left_alone(void) {
    int ns = -1;
    const char *src = "// __shared__ float a[1];\n/* extern __shared__ float b[]; */\n"
                      "const char *s = \"__shared__ float c[2];\";\n"
                      "#define DECL extern __shared__ float d[]\n"
                      "void f() { __shared__ float *e, g[2]; __shared__ int h = 0, i[2]; __shared__ float (*p)[4]; }\n";
    const char *o = rw(src, &ns);
    CHECK(strcmp(o, src) == 0);
    CHECK(ns == 0);
}

static void test_lines_kept(void) {
    const char *src = "void f() {\n  __shared__ float\n    x[8]\n    [2];\n  extern\n __shared__ float y[];\n}\nint last;\n";
    const char *o = rw(src, NULL);
    CHECK(count_lines(o) == count_lines(src));
    const char *l = strstr(o, "int last;");
    CHECK(l && count_lines(l) == 1);
    CHECK_HAS(o, "SHORTSIM_STATIC_SHARED(0, 1, x, \"x\", float [8][2]);");
}

static void test_scan(void) {
    const char *src = "__global__ void a(int *x);\n__device__ int helper(int);\n"
                      "extern \"C\" __global__ void __launch_bounds__(256) b(float *y) {}\n"
                      "__global__ void a(int *x) { }\n// __global__ void c(void)\n";
    char **names = NULL;
    int *bodies = NULL;
    int n = sim_scan_kernels(src, strlen(src), &names, &bodies);
    CHECK(n == 2);
    if (n == 2) {
        CHECK(strcmp(names[0], "a") == 0 && bodies[0] == 1);
        CHECK(strcmp(names[1], "b") == 0 && bodies[1] == 1);
    }
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
    free(bodies);
    /* namespaces qualify the name (extern "C" does not); two bodies of one name are overloads */
    src = "namespace ops { __global__ void nk(float *x) { if (x) { } } namespace in { __global__ void k2() {} } }\n"
          "namespace { __global__ void anon() {} }\nextern \"C\" { __global__ void c1() {} }\n"
          "__global__ void ov(int *x) {}\n__global__ void ov(float *x) {}\n__global__ void top() {}\n"
          "template <int B> __global__ void tk(float *x) {}\ntemplate __global__ void tk<4>(float *);\n"
          "__global__ void after() {}\n";
    n = sim_scan_kernels(src, strlen(src), &names, &bodies);
    CHECK(n == 8);
    const char *want[] = {"ops::nk", "ops::in::k2", "(anonymous namespace)::anon", "c1", "ov", "top", "tk", "after"};
    const int want_bodies[] = {1, 1, 1, 1, 2, 1, 1 | SIM_KERNEL_TEMPLATE, 1};
    for (int i = 0; i < n && i < 8; i++) {
        if (strcmp(names[i], want[i]) != 0) fprintf(stderr, "scan: got %s, want %s\n", names[i], want[i]);
        CHECK(strcmp(names[i], want[i]) == 0);
        CHECK(bodies[i] == want_bodies[i]);
    }
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
    free(bodies);
}

int main(void) {
    test_forms();
    test_left_alone();
    test_lines_kept();
    test_scan();
    rw("", NULL);
    return check_done("sim_rewrite");
}
