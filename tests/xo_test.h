/* Shared utilities of the core test suite, written against the public API only:
 * reference loops for every op (float and double), seeded random fill, relative
 * comparison, buffer helpers, buffer snapshots and stdout/stderr capture.
 *
 * Reference loops take pointers that already include the element offset; strides,
 * leading dimensions, layouts and transposes follow CBLAS. They accumulate in double and
 * follow reference BLAS's rules: alpha == 0 reads neither A/B (gemm) nor A/x (gemv) nor
 * x (axpy); beta == 0 does not read C/y; scal by 0 writes zeros; nrm2 is scaled, so it
 * neither overflows nor underflows where the norm is representable. */
#ifndef XO_TEST_H
#define XO_TEST_H

#include <crossover.h>
#include <crossover/plugin.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#define XOT_TOL_F 1e-4
#define XOT_TOL_D 1e-10
#define XOT_EXIT_SKIP 77

/* ---- random data ------------------------------------------------------------ */

/* A uniform number in [lo, hi) from the generator state *state (seeded by the caller). */
double xot_uniform(uint64_t *state, double lo, double hi);
void xot_fill_f(float *p, size_t n, uint64_t seed, double lo, double hi);
void xot_fill_d(double *p, size_t n, uint64_t seed, double lo, double hi);

/* ---- reference loops ---------------------------------------------------------- */

#define XOT_REF_DECL(T, p)                                                                   \
    void xot_ref_##p##gemm(xo_layout layout, xo_transpose ta, xo_transpose tb, size_t m,   \
                           size_t n, size_t k, T alpha, const T *a, size_t lda, const T *b, \
                           size_t ldb, T beta, T *c, size_t ldc);                           \
    void xot_ref_##p##gemv(xo_layout layout, xo_transpose ta, size_t m, size_t n, T alpha,  \
                           const T *a, size_t lda, const T *x, size_t incx, T beta, T *y,   \
                           size_t incy);                                                    \
    void xot_ref_##p##axpy(size_t n, T alpha, const T *x, size_t incx, T *y, size_t incy);  \
    void xot_ref_##p##scal(size_t n, T alpha, T *x, size_t incx);                           \
    T xot_ref_##p##dot(size_t n, const T *x, size_t incx, const T *y, size_t incy);         \
    T xot_ref_##p##nrm2(size_t n, const T *x, size_t incx);                                 \
    void xot_ref_##p##unary(xo_unary_op op, size_t n, const T *x, T *y);                    \
    void xot_ref_##p##binary(xo_binary_op op, size_t n, const T *a, const T *b, T *c);      \
    void xot_ref_##p##bias(size_t rows, size_t cols, T *a, size_t lda, const T *bias);      \
    T xot_ref_##p##reduce(xo_reduce_op op, size_t n, const T *x);

XOT_REF_DECL(float, s)
XOT_REF_DECL(double, d)
#undef XOT_REF_DECL

/* The neural-network ops. softmax, reduce_axis, bias and softmax_xent are
 * row-major; gemm_bias_act's bias may be NULL; softmax's y may be x; softmax_xent's
 * grad may be NULL (loss only). */
#define XOT_REF_NN_DECL(T, p)                                                                  \
    void xot_ref_##p##copy(size_t n, const T *x, size_t incx, T *y, size_t incy);             \
    void xot_ref_##p##fill(size_t n, T value, T *x, size_t incx);                             \
    void xot_ref_##p##axpby(size_t n, T alpha, const T *x, size_t incx, T beta, T *y,         \
                            size_t incy);                                                     \
    void xot_ref_##p##ger(xo_layout layout, size_t m, size_t n, T alpha, const T *x,          \
                          size_t incx, const T *y, size_t incy, T *a, size_t lda);            \
    void xot_ref_##p##binary_scalar(xo_binary_op op, size_t n, const T *a, T s, T *c);        \
    void xot_ref_##p##softmax(xo_softmax_op op, size_t rows, size_t cols, const T *x,         \
                              size_t ldx, T *y, size_t ldy);                                  \
    void xot_ref_##p##reduce_axis(xo_reduce_op op, size_t rows, size_t cols, const T *x,      \
                                  size_t ldx, int axis, T *out);                              \
    void xot_ref_##p##gemm_bias_act(xo_layout layout, xo_transpose ta, xo_transpose tb,       \
                                    size_t m, size_t n, size_t k, T alpha, const T *a,        \
                                    size_t lda, const T *b, size_t ldb, T beta, T *c,         \
                                    size_t ldc, const T *bias, xo_unary_op act);           \
    void xot_ref_##p##softmax_xent(size_t rows, size_t cols, const T *x, size_t ldx,          \
                                   const int32_t *labels, T scale, T *loss, T *grad,          \
                                   size_t ldg);                                               \
    void xot_ref_##p##argmax(size_t rows, size_t cols, const T *x, size_t ldx, int32_t *idx);

XOT_REF_NN_DECL(float, s)
XOT_REF_NN_DECL(double, d)
#undef XOT_REF_NN_DECL

/* The unary ops' facts, read from their rows in XO_UNARY_OP_MAP (crossover.h), so tests
 * walk the map instead of listing ops: the name ("GELU_GRAD"; "?" for no op), whether
 * gemm_bias_act takes it, what its formula takes ('x' the input, 'y' the forward output),
 * and inputs from its domain [LO, HI] without (-1/4, 1/4): xot_unary_input maps u in
 * [0, 1) there, the fills draw n of them from `seed`. */
const char *xot_unary_name(int op);
const char *xot_binary_name(int op); /* "ADD", from XO_BINARY_OP_MAP; "?" for no op */
int xot_unary_is_activation(int op);
char xot_unary_takes(int op);
double xot_unary_input(int op, double u);
void xot_unary_fill_s(int op, float *p, size_t n, uint64_t seed);
void xot_unary_fill_d(int op, double *p, size_t n, uint64_t seed);

/* Elements a CBLAS-style strided vector of n elements spans: 1 + (n-1)*inc (0 if n = 0). */
size_t xot_span(size_t n, size_t inc);
/* Elements a matrix of r x c stored with leading dimension ld spans in `layout`. */
size_t xot_mat_span(xo_layout layout, size_t r, size_t c, size_t ld);

/* ---- comparison ---------------------------------------------------------------- */

/* Index of the first element where |got - want| > tol * max(1, |want|) (NaN must match
 * NaN), or -1 when all agree. */
long xot_first_mismatch_f(const float *got, const float *want, size_t n, double tol);
long xot_first_mismatch_d(const double *got, const double *want, size_t n, double tol);

/* cmocka assertions with a readable message (what, index, got, want). */
void xot_assert_close_f_(const float *got, const float *want, size_t n, const char *what,
                         const char *file, int line);
void xot_assert_close_d_(const double *got, const double *want, size_t n, const char *what,
                         const char *file, int line);
#define xot_assert_close_f(got, want, n, what) \
    xot_assert_close_f_((got), (want), (n), (what), __FILE__, __LINE__)
#define xot_assert_close_d(got, want, n, what) \
    xot_assert_close_d_((got), (want), (n), (what), __FILE__, __LINE__)

/* Assert `st` is `want`, printing xo_last_error() otherwise. */
void xot_assert_status_(xo_status st, xo_status want, const char *expr, const char *file, int line);
#define xot_assert_status(expr, want) \
    xot_assert_status_((expr), (want), #expr, __FILE__, __LINE__)
#define xot_assert_ok(expr) xot_assert_status_((expr), XO_OK, #expr, __FILE__, __LINE__)

/* 1 if `hay` contains `needle` ignoring case. */
int xot_contains(const char *hay, const char *needle);
/* 1 if `hay` contains any of the '|'-separated alternatives in `alts`. */
int xot_contains_any(const char *hay, const char *alts);
/* 1 if `hay` contains one of the '|'-separated alternatives in `alts` as a whole word
 * (not preceded or followed by a letter, digit or '_'), ignoring case. */
int xot_has_word(const char *hay, const char *alts);

/* ---- buffers --------------------------------------------------------------------- */

/* A buffer of `bytes` holding `data` (NULL: zero-filled). Fails the test on error. */
xo_buffer *xot_buffer(xo_context *ctx, const void *data, size_t bytes);
/* Read the whole buffer into a fresh malloc'ed block (caller frees). */
void *xot_read_all(xo_buffer *b);
/* An N x N sgemm (N <= 96, big enough for the CPU's threads) forced onto the CPU,
 * checked against the reference; `what` labels a failure. */
void xot_check_cpu_sgemm(xo_context *ctx, int n, const char *what);

/* Snapshot of the contents of up to XOT_SNAP_MAX buffers. */
#define XOT_SNAP_MAX 16
typedef struct xot_snap {
    int n;
    xo_buffer *buf[XOT_SNAP_MAX];
    unsigned char *data[XOT_SNAP_MAX];
    size_t bytes[XOT_SNAP_MAX];
} xot_snap;
void xot_snap_take(xot_snap *s, xo_buffer *const *bufs, int n);
/* Index of the first buffer whose contents differ from the snapshot, or -1. */
int xot_snap_changed(const xot_snap *s);
void xot_snap_free(xot_snap *s);

/* ---- devices -------------------------------------------------------------------- */

/* Spec naming device `dev` by plugin and index among that plugin's devices ("opencl:1"). */
void xot_device_spec(const xo_context *ctx, int dev, char *out, size_t cap);
/* Force device `dev` by its spec: its info to *info, "SUITE SPEC (NAME)" to label.
 * 0, or 1 with a message on stderr when it cannot be forced. */
int xot_force_device(xo_context *ctx, int dev, const char *suite, xo_device_info *info, char *label,
                     size_t cap);
/* Assert the calling thread's last decision ran `op` on `dev` (dev < 0: any device)
 * with the given forced flag. */
void xot_assert_decision_(const xo_context *ctx, const char *op, int dev, int forced,
                          const char *file, int line);
#define xot_assert_decision(ctx, op, dev, forced) \
    xot_assert_decision_((ctx), (op), (dev), (forced), __FILE__, __LINE__)

/* ---- a test program's start ------------------------------------------------------ */

/* A context for a test program to *ctx: 0, or 1 with the reason on stderr. With a spec
 * ("opencl", "cuda"), that device's index goes to *dev (when dev is not NULL), and a
 * program on a machine without it gets XOT_EXIT_SKIP, a line on stdout and no context. */
int xot_main_context(xo_context **ctx, const char *spec, int *dev);
/* 0 when a device matches `spec` here (asked of a context made for the question),
 * XOT_EXIT_SKIP with a line on stdout when none does, 1 when no context can be made. */
int xot_skip_without(const char *spec);

/* A plugin below the core (its vtable) opened with `host`: its state to *st and 0, or -1
 * when init fails or finds no device. */
int xot_plugin_open(const xo_plugin *p, const xo_plugin_host *host, void **st);
/* 0 when plugin p finds a device here (opened and shut down for the question),
 * XOT_EXIT_SKIP with "no <what> here: skipped" on stdout when it finds none. */
int xot_plugin_skip_without(const xo_plugin *p, const xo_plugin_host *host, const char *what);

/* ---- output capture (fd level) ---------------------------------------------------- */

typedef struct xot_capture {
    int fd;       /* the captured fd (1 or 2) */
    int saved;    /* dup of the original */
    int tmp;      /* temporary file receiving the output */
} xot_capture;
int xot_capture_begin(xot_capture *c, int fd);
/* Restore the fd and return what was written (malloc'ed, NUL-terminated). */
char *xot_capture_end(xot_capture *c);

/* For tests that drive a plugin below the core (its vtable): a host that keeps the last
 * error detail in xot_host_error, counts the lines logged at XO_LOG_WARN or worse (shown
 * on stderr under XO_TEST_VERBOSE) and the fault sites asked, and fires only the site
 * named by xot_host_fail_site (NULL: none). */
extern char xot_host_error[512];
extern int xot_host_warnings;
extern int xot_host_fault_asks;
extern const char *xot_host_fail_site;
xo_plugin_host xot_quiet_host(const char *plugin_name);

#endif /* XO_TEST_H */
