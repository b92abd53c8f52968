/* crossover: BLAS-style linear algebra and neural-network ops, each run on the
 * device that is fastest for it (CPU via OpenBLAS, OpenCL, CUDA).
 *
 * This header is the whole application interface; see docs/ and README.md. */
#ifndef CROSSOVER_H
#define CROSSOVER_H

#include <stddef.h>
#include <stdint.h>

/* XO_VERSION_MAJOR, _MINOR, _PATCH and XO_VERSION_STRING, generated from the version in
 * CMakeLists.txt (project(crossover VERSION ...)), the one place it is set. */
#include <crossover/version.h>

#ifdef __cplusplus
extern "C" {
#endif

/* XO_API marks every public function: the libraries build with hidden visibility, so
 * these are the only names libcrossover.so exports (tests/abi_exports.sh checks it). */
#ifndef XO_API
#if defined(__GNUC__) || defined(__clang__)
#define XO_API __attribute__((visibility("default")))
#else
#define XO_API
#endif
#endif

/* ---- status and errors ------------------------------------------------- */

/* X-macro: the enum and xo_status_string are generated from one list. */
#define XO_STATUS_MAP(X)          \
    X(XO_OK)                      \
    X(XO_ERR_INVALID_ARGUMENT)    \
    X(XO_ERR_OUT_OF_MEMORY)       \
    X(XO_ERR_NO_DEVICE)           \
    X(XO_ERR_DEVICE)              \
    X(XO_ERR_UNSUPPORTED)         \
    X(XO_ERR_IO)

typedef enum xo_status {
#define XO_STATUS_ENUM_(name) name,
    XO_STATUS_MAP(XO_STATUS_ENUM_)
#undef XO_STATUS_ENUM_
} xo_status;

/* "XO_ERR_INVALID_ARGUMENT" etc.; never NULL ("XO_UNKNOWN_STATUS" for junk). */
XO_API const char *xo_status_string(xo_status s);
/* Thread-local detail of this thread's last failure, naming the function and the
 * offending argument or variable; "" if none. Never NULL. */
XO_API const char *xo_last_error(void);

/* ---- context and devices ------------------------------------------------ */

typedef struct xo_context xo_context;
XO_API xo_status xo_context_create(xo_context **out);
XO_API void xo_context_destroy(xo_context *ctx); /* NULL is a no-op; waits for work */

typedef enum xo_device_kind { XO_DEVICE_CPU, XO_DEVICE_GPU, XO_DEVICE_ACCELERATOR } xo_device_kind;

typedef struct xo_device_info {
    char name[128], vendor[64], driver[64], plugin[16]; /* plugin: "cpu","opencl","cuda" */
    xo_device_kind kind;
    int host_unified;           /* shares host memory */
    int fp64;                   /* runs double precision */
    double launch_us;           /* fixed cost of one op, dispatch to completion */
    double transfer_latency_us; /* fixed cost of one host<->device copy */
    double h2d_gbps, d2h_gbps;  /* host->device, device->host bandwidth */
    double mem_gbps;            /* device memory bandwidth seen by a streaming op */
    double peak_gflops;         /* best measured sgemm throughput */
} xo_device_info;

XO_API int xo_device_count(const xo_context *ctx); /* device 0 is always the host CPU */
XO_API xo_status xo_device_get_info(const xo_context *ctx, int device, xo_device_info *out);
XO_API xo_status xo_device_find(const xo_context *ctx, const char *spec, int *out_device);
XO_API xo_status xo_set_device(xo_context *ctx, const char *spec); /* "auto" or a device spec */

/* ---- buffers ------------------------------------------------------------- */

typedef struct xo_buffer xo_buffer;
XO_API xo_status xo_buffer_create(xo_context *ctx, size_t bytes, xo_buffer **out); /* zero-filled, bytes > 0 */
/* offset and bytes count bytes (op offsets count elements) */
XO_API xo_status xo_buffer_write(xo_buffer *b, size_t offset, const void *src, size_t bytes);
/* offset and bytes count bytes; waits for the buffer's producers */
XO_API xo_status xo_buffer_read(xo_buffer *b, size_t offset, void *dst, size_t bytes);
XO_API size_t xo_buffer_size(const xo_buffer *b);
XO_API void xo_buffer_destroy(xo_buffer *b); /* NULL: no-op; a wrapped buffer's memory stays the caller's */

/* Wrap memory the caller owns: the buffer's host copy IS `host` (no copy, any
 * alignment; devices that share host memory use it in place where it is 128-byte
 * aligned, others keep a copy; memory not aligned for a double gets an aligned host
 * copy, which xo_buffer_sync writes back). `host` must stay valid until xo_buffer_destroy, which
 * does not free it. bytes == 0 or host == NULL: XO_ERR_INVALID_ARGUMENT. A wrapped
 * buffer is used like any other: ops take element offsets, read and write byte offsets;
 * after xo_buffer_write returns, `host` holds the data. */
XO_API xo_status xo_buffer_wrap(xo_context *ctx, void *host, size_t bytes, xo_buffer **out);
/* Wait for b's producers (and for queued ops still reading `host` in place) and make
 * `host` current: after it the caller may read or write `host` directly. */
XO_API xo_status xo_buffer_sync(xo_buffer *b);
/* The caller wrote `host` directly: every device copy is now stale (the next op on a
 * device moves the data there again). */
XO_API xo_status xo_buffer_host_written(xo_buffer *b);

/* ---- ops ------------------------------------------------------------------ */

typedef enum xo_layout { XO_ROW_MAJOR = 101, XO_COL_MAJOR = 102 } xo_layout;
typedef enum xo_transpose { XO_NO_TRANS = 111, XO_TRANS = 112 } xo_transpose;
/* Element-wise ops, one row each in enum order (values are fixed: append only), with
 * every fact about the op that is not its formula (plugins/common/xo_formulas.h):
 *   X(NAME, ACT, TAKES, LO, HI)
 *   NAME   XO_NAME
 *   ACT    1 for a forward op that gemm_bias_act takes as its activation
 *   TAKES  what the formula is applied to: x, the op's input (for GELU_GRAD and SILU_GRAD
 *          the forward op's input: GELU_GRAD(x) = dGELU/dx), or y, the forward op's
 *          output (the older *_GRAD: TANH_GRAD(y) = 1 - y*y)
 *   LO HI  the domain its tests draw inputs from, negatives included where the op has
 *          them (inputs within 1/4 of zero are left out: 1/x and friends are steep there)
 * The *_COUNT value ends each enum; it is not an op. */
#define XO_UNARY_OP_MAP(X)                                                                   \
    X(RELU, 1, x, -4, 4) X(TANH, 1, x, -4, 4) X(SIGMOID, 1, x, -8, 8) X(EXP, 1, x, -4, 4)    \
    X(NEG, 1, x, -4, 4) X(SQUARE, 1, x, -4, 4)                                               \
    X(RELU_GRAD, 0, y, -4, 4) X(TANH_GRAD, 0, y, -1, 1) X(SIGMOID_GRAD, 0, y, 0, 1)          \
    X(SQRT, 1, x, 0, 4) X(RSQRT, 1, x, 0, 4) X(LOG, 1, x, 0, 4) X(ABS, 1, x, -4, 4)          \
    X(RECIPROCAL, 1, x, -4, 4) X(IDENTITY, 1, x, -4, 4) /* y = x */                          \
    X(GELU, 1, x, -4, 4) X(GELU_GRAD, 0, x, -4, 4) X(SILU, 1, x, -8, 8) X(SILU_GRAD, 0, x, -8, 8)
#define XO_BINARY_OP_MAP(X) X(ADD) X(SUB) X(MUL) X(DIV) X(MAX)

typedef enum xo_unary_op {
#define XO_UNARY_ENUM_(NAME, ...) XO_##NAME,
    XO_UNARY_OP_MAP(XO_UNARY_ENUM_)
#undef XO_UNARY_ENUM_
    XO_UNARY_OP_COUNT
} xo_unary_op;
typedef enum xo_binary_op {
#define XO_BINARY_ENUM_(NAME) XO_##NAME,
    XO_BINARY_OP_MAP(XO_BINARY_ENUM_)
#undef XO_BINARY_ENUM_
    XO_BINARY_OP_COUNT
} xo_binary_op;
typedef enum xo_reduce_op { XO_SUM, XO_MAX_ELEMENT } xo_reduce_op;
typedef enum xo_softmax_op { XO_SOFTMAX, XO_LOG_SOFTMAX } xo_softmax_op;

/* Op offsets, increments and leading dimensions count elements (not bytes). BLAS
 * semantics hold on every device: where alpha == 0, A/B/x are not read; where
 * beta == 0, C/y are not read; scal with alpha == 0 writes zeros; nrm2 neither
 * overflows nor underflows where the result is representable. */

XO_API xo_status xo_sgemm(xo_context *ctx, xo_layout layout, xo_transpose ta, xo_transpose tb,
                          size_t m, size_t n, size_t k, float alpha,
                          xo_buffer *a, size_t a_off, size_t lda,
                          xo_buffer *b, size_t b_off, size_t ldb, float beta,
                          xo_buffer *c, size_t c_off, size_t ldc);
XO_API xo_status xo_dgemm(xo_context *ctx, xo_layout layout, xo_transpose ta, xo_transpose tb,
                          size_t m, size_t n, size_t k, double alpha,
                          xo_buffer *a, size_t a_off, size_t lda,
                          xo_buffer *b, size_t b_off, size_t ldb, double beta,
                          xo_buffer *c, size_t c_off, size_t ldc);
XO_API xo_status xo_sgemv(xo_context *ctx, xo_layout layout, xo_transpose ta,
                          size_t m, size_t n, float alpha,
                          xo_buffer *a, size_t a_off, size_t lda,
                          xo_buffer *x, size_t x_off, size_t incx, float beta,
                          xo_buffer *y, size_t y_off, size_t incy);
XO_API xo_status xo_dgemv(xo_context *ctx, xo_layout layout, xo_transpose ta,
                          size_t m, size_t n, double alpha,
                          xo_buffer *a, size_t a_off, size_t lda,
                          xo_buffer *x, size_t x_off, size_t incx, double beta,
                          xo_buffer *y, size_t y_off, size_t incy);
XO_API xo_status xo_saxpy(xo_context *ctx, size_t n, float alpha,
                          xo_buffer *x, size_t x_off, size_t incx,
                          xo_buffer *y, size_t y_off, size_t incy);
XO_API xo_status xo_daxpy(xo_context *ctx, size_t n, double alpha,
                          xo_buffer *x, size_t x_off, size_t incx,
                          xo_buffer *y, size_t y_off, size_t incy);
XO_API xo_status xo_sscal(xo_context *ctx, size_t n, float alpha,
                          xo_buffer *x, size_t x_off, size_t incx);
XO_API xo_status xo_dscal(xo_context *ctx, size_t n, double alpha,
                          xo_buffer *x, size_t x_off, size_t incx);
XO_API xo_status xo_sdot(xo_context *ctx, size_t n, xo_buffer *x, size_t x_off, size_t incx,
                         xo_buffer *y, size_t y_off, size_t incy,
                         xo_buffer *out, size_t out_off); /* result stays in a buffer */
XO_API xo_status xo_ddot(xo_context *ctx, size_t n, xo_buffer *x, size_t x_off, size_t incx,
                         xo_buffer *y, size_t y_off, size_t incy,
                         xo_buffer *out, size_t out_off);
XO_API xo_status xo_snrm2(xo_context *ctx, size_t n, xo_buffer *x, size_t x_off, size_t incx,
                          xo_buffer *out, size_t out_off);
XO_API xo_status xo_dnrm2(xo_context *ctx, size_t n, xo_buffer *x, size_t x_off, size_t incx,
                          xo_buffer *out, size_t out_off);
XO_API xo_status xo_sunary(xo_context *ctx, xo_unary_op op, size_t n,
                           xo_buffer *x, size_t x_off, xo_buffer *y, size_t y_off); /* y may be x */
XO_API xo_status xo_dunary(xo_context *ctx, xo_unary_op op, size_t n,
                           xo_buffer *x, size_t x_off, xo_buffer *y, size_t y_off);
XO_API xo_status xo_sbinary(xo_context *ctx, xo_binary_op op, size_t n,
                            xo_buffer *a, size_t a_off, xo_buffer *b, size_t b_off,
                            xo_buffer *c, size_t c_off); /* c may be a or b exactly */
XO_API xo_status xo_dbinary(xo_context *ctx, xo_binary_op op, size_t n,
                            xo_buffer *a, size_t a_off, xo_buffer *b, size_t b_off,
                            xo_buffer *c, size_t c_off);
XO_API xo_status xo_sbias(xo_context *ctx, size_t rows, size_t cols,
                          xo_buffer *a, size_t a_off, size_t lda,
                          xo_buffer *bias, size_t bias_off); /* row-major: a[i][j] += bias[j] */
XO_API xo_status xo_dbias(xo_context *ctx, size_t rows, size_t cols,
                          xo_buffer *a, size_t a_off, size_t lda,
                          xo_buffer *bias, size_t bias_off);
XO_API xo_status xo_sreduce(xo_context *ctx, xo_reduce_op op, size_t n,
                            xo_buffer *x, size_t x_off, xo_buffer *out, size_t out_off);
XO_API xo_status xo_dreduce(xo_context *ctx, xo_reduce_op op, size_t n,
                            xo_buffer *x, size_t x_off, xo_buffer *out, size_t out_off);
XO_API xo_status xo_finish(xo_context *ctx); /* waits for all queued work */

/* ---- ops added in 0.3 (offsets, increments, leading dimensions: elements) ---- */

XO_API xo_status xo_scopy(xo_context *ctx, size_t n, xo_buffer *x, size_t x_off, size_t incx,
                          xo_buffer *y, size_t y_off, size_t incy); /* bit-exact; y may be x exactly */
XO_API xo_status xo_dcopy(xo_context *ctx, size_t n, xo_buffer *x, size_t x_off, size_t incx,
                          xo_buffer *y, size_t y_off, size_t incy);
XO_API xo_status xo_sfill(xo_context *ctx, size_t n, float value,
                          xo_buffer *x, size_t x_off, size_t incx); /* never reads x */
XO_API xo_status xo_dfill(xo_context *ctx, size_t n, double value,
                          xo_buffer *x, size_t x_off, size_t incx);
XO_API xo_status xo_saxpby(xo_context *ctx, size_t n, float alpha, xo_buffer *x, size_t x_off,
                           size_t incx, float beta, xo_buffer *y, size_t y_off, size_t incy);
                           /* y = alpha*x + beta*y */
XO_API xo_status xo_daxpby(xo_context *ctx, size_t n, double alpha, xo_buffer *x, size_t x_off,
                           size_t incx, double beta, xo_buffer *y, size_t y_off, size_t incy);
XO_API xo_status xo_sger(xo_context *ctx, xo_layout layout, size_t m, size_t n, float alpha,
                         xo_buffer *x, size_t x_off, size_t incx,
                         xo_buffer *y, size_t y_off, size_t incy,
                         xo_buffer *a, size_t a_off, size_t lda); /* A += alpha x y^T */
XO_API xo_status xo_dger(xo_context *ctx, xo_layout layout, size_t m, size_t n, double alpha,
                         xo_buffer *x, size_t x_off, size_t incx,
                         xo_buffer *y, size_t y_off, size_t incy,
                         xo_buffer *a, size_t a_off, size_t lda);
XO_API xo_status xo_sbinary_scalar(xo_context *ctx, xo_binary_op op, size_t n,
                                   xo_buffer *a, size_t a_off, float s,
                                   xo_buffer *c, size_t c_off); /* c[i] = a[i] op s; c may be a */
XO_API xo_status xo_dbinary_scalar(xo_context *ctx, xo_binary_op op, size_t n,
                                   xo_buffer *a, size_t a_off, double s,
                                   xo_buffer *c, size_t c_off);
XO_API xo_status xo_sscale_by(xo_context *ctx, size_t n, xo_buffer *s, size_t s_off,
                              xo_buffer *x, size_t x_off, size_t incx);
                              /* x *= s[s_off], read on the device that runs the op: no host sync */
XO_API xo_status xo_dscale_by(xo_context *ctx, size_t n, xo_buffer *s, size_t s_off,
                              xo_buffer *x, size_t x_off, size_t incx);
XO_API xo_status xo_ssoftmax(xo_context *ctx, xo_softmax_op op, size_t rows, size_t cols,
                             xo_buffer *x, size_t x_off, size_t ldx,
                             xo_buffer *y, size_t y_off, size_t ldy);
                             /* row-major, along each row, max subtracted; y may be x with ldy == ldx */
XO_API xo_status xo_dsoftmax(xo_context *ctx, xo_softmax_op op, size_t rows, size_t cols,
                             xo_buffer *x, size_t x_off, size_t ldx,
                             xo_buffer *y, size_t y_off, size_t ldy);
XO_API xo_status xo_sreduce_axis(xo_context *ctx, xo_reduce_op op, size_t rows, size_t cols,
                                 xo_buffer *x, size_t x_off, size_t ldx, int axis,
                                 xo_buffer *out, size_t out_off);
                                 /* row-major; axis 0: out[j] = op over i of x[i][j] (cols results);
                                    axis 1: out[i] = op over j of x[i][j] (rows results) */
XO_API xo_status xo_dreduce_axis(xo_context *ctx, xo_reduce_op op, size_t rows, size_t cols,
                                 xo_buffer *x, size_t x_off, size_t ldx, int axis,
                                 xo_buffer *out, size_t out_off);
XO_API xo_status xo_sgemm_bias_act(xo_context *ctx, xo_layout layout, xo_transpose ta,
                                   xo_transpose tb, size_t m, size_t n, size_t k, float alpha,
                                   xo_buffer *a, size_t a_off, size_t lda,
                                   xo_buffer *b, size_t b_off, size_t ldb, float beta,
                                   xo_buffer *c, size_t c_off, size_t ldc,
                                   xo_buffer *bias, size_t bias_off, xo_unary_op act);
                                   /* C = act(alpha op(A) op(B) + beta C + bias): bias[j] (n elements,
                                      or NULL: none) added to column j; act a forward xo_unary_op or
                                      XO_IDENTITY; one pass over C */
XO_API xo_status xo_dgemm_bias_act(xo_context *ctx, xo_layout layout, xo_transpose ta,
                                   xo_transpose tb, size_t m, size_t n, size_t k, double alpha,
                                   xo_buffer *a, size_t a_off, size_t lda,
                                   xo_buffer *b, size_t b_off, size_t ldb, double beta,
                                   xo_buffer *c, size_t c_off, size_t ldc,
                                   xo_buffer *bias, size_t bias_off, xo_unary_op act);

/* Softmax cross-entropy over integer class labels (0.4), row-major: per row i with
 * label c = labels[labels_off + i] (int32), loss[i] = -log_softmax(x_i)[c] and grad row
 * i = scale * (softmax(x_i) - onehot(c)), in one pass over x. grad may be NULL (loss
 * only), or x itself with ldg == ldx. A label outside [0, cols) marks the row ignored:
 * its loss and gradient are 0. labels_off counts int32 elements. */
XO_API xo_status xo_ssoftmax_xent(xo_context *ctx, size_t rows, size_t cols,
                           xo_buffer *x, size_t x_off, size_t ldx,
                           xo_buffer *labels, size_t labels_off, float scale,
                           xo_buffer *loss, size_t loss_off,
                           xo_buffer *grad, size_t grad_off, size_t ldg);
XO_API xo_status xo_dsoftmax_xent(xo_context *ctx, size_t rows, size_t cols,
                           xo_buffer *x, size_t x_off, size_t ldx,
                           xo_buffer *labels, size_t labels_off, double scale,
                           xo_buffer *loss, size_t loss_off,
                           xo_buffer *grad, size_t grad_off, size_t ldg);

/* Row-major: idx[i] (int32) = the column of row i's largest element, the first one on
 * ties; a NaN counts as larger than any number (the first NaN wins, as numpy's argmax).
 * cols == 0 is XO_ERR_INVALID_ARGUMENT; idx_off counts int32 elements. */
XO_API xo_status xo_sargmax(xo_context *ctx, size_t rows, size_t cols,
                            xo_buffer *x, size_t x_off, size_t ldx,
                            xo_buffer *idx, size_t idx_off);
XO_API xo_status xo_dargmax(xo_context *ctx, size_t rows, size_t cols,
                            xo_buffer *x, size_t x_off, size_t ldx,
                            xo_buffer *idx, size_t idx_off);

/* ---- placement ------------------------------------------------------------- */

#define XO_MAX_DEVICES 16
typedef struct xo_estimate {
    int eligible; /* the device can run this op */
    double launch_us, transfer_us, compute_us, total_us;
} xo_estimate;
typedef struct xo_decision {
    char op[32];  /* e.g. "sgemm" */
    int device;   /* where it ran */
    int forced;   /* placed by XO_DEVICE / xo_set_device, not by cost */
    int ndevices;
    xo_estimate est[XO_MAX_DEVICES];
} xo_decision;
XO_API xo_status xo_last_decision(const xo_context *ctx, xo_decision *out);

typedef struct xo_stats {
    uint64_t ops, bytes_in, bytes_out, transfers, fallbacks;
    double busy_us;
} xo_stats;
XO_API xo_status xo_stats_get(const xo_context *ctx, int device, xo_stats *out);
XO_API xo_status xo_stats_reset(xo_context *ctx);

/* ---- plans (0.4): capture a step once, run it many times ----------------------- */

/* Between xo_capture_begin and xo_capture_end, the ops this thread issues on ctx (and
 * xo_buffer_write / xo_buffer_read on its buffers) are validated and recorded instead of
 * run; xo_plan_run replays them, placed as a whole (docs/plans.md). */
typedef struct xo_plan xo_plan;
XO_API xo_status xo_capture_begin(xo_context *ctx);
XO_API xo_status xo_capture_end(xo_context *ctx, xo_plan **out);
XO_API xo_status xo_plan_run(xo_plan *plan);
XO_API void xo_plan_destroy(xo_plan *plan);             /* NULL: no-op; waits for a run */
XO_API xo_status xo_plan_describe(const xo_plan *plan, char *text, size_t size);
XO_API size_t xo_plan_describe_size(const xo_plan *plan); /* bytes xo_plan_describe needs, the
                                                           NUL included; 0 for NULL */

/* ---- the clock (0.5) ------------------------------------------------------------ */

/* Monotonic microseconds: the real clock, or under XO_SIMULATE=FILE the simulated
 * machine's (docs/machines/README.md), so that a program timing itself with it gets the
 * recorded machine's rates. NULL ctx: the real clock. */
XO_API double xo_clock_us(xo_context *ctx);

#ifdef __cplusplus
}
#endif
#endif /* CROSSOVER_H */
