/* White-box checks of the CUDA plugin that need no GPU:
 *   - the library carries the kernels: the embedded fatbin is non-empty, starts with
 *     the fatbin magic, is aligned, and names every kernel the plugin looks up;
 *   - the plugin descriptor is complete;
 *   - init against a stand-in host succeeds (no driver here: 0 devices, no error,
 *     nothing logged above "info"), and shutdown takes what init gave;
 *   - native codes are translated with the call named. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cuda_internal.h"
#include "xo_test.h"

/* The core's host services: xo_test.c's quiet host (set in main). */
static xo_plugin_host k_host;

/* ---- the embedded kernels -------------------------------------------------------------- */

static int contains_bytes(const unsigned char *hay, size_t n, const char *needle)
{
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++)
        if (memcmp(hay + i, needle, k) == 0) return 1;
    return 0;
}

static void test_fatbin_embedded(void **state)
{
    (void)state;
    size_t size = 0;
    const unsigned char *fb = xo__cuda_fatbin(&size);
    assert_non_null(fb);
    assert_true(size > 1024);
    /* Fatbin header magic 0xBA55ED50, little-endian. */
    assert_int_equal(fb[0], 0x50);
    assert_int_equal(fb[1], 0xED);
    assert_int_equal(fb[2], 0x55);
    assert_int_equal(fb[3], 0xBA);
    assert_int_equal((uintptr_t)fb % 16, 0);
    for (int k = 0; k < XO_CUDA_K_COUNT; k++)
        for (int t = 0; t < 2; t++) {
            const char *name = xo__cuda_kernel_names[k][t];
            assert_non_null(name);
            if (!contains_bytes(fb, size, name)) fail_msg("kernel %s is not in the embedded fatbin", name);
        }
}

/* ---- the plugin descriptor and init without a GPU ---------------------------------------- */

const xo_plugin *xo_plugin_cuda(void);

static void test_descriptor(void **state)
{
    (void)state;
    const xo_plugin *p = xo_plugin_cuda();
    assert_non_null(p);
    assert_int_equal(p->api_version, XO_PLUGIN_API_VERSION);
    assert_string_equal(p->name, "cuda");
    assert_non_null(p->init);
    assert_non_null(p->shutdown);
    assert_non_null(p->device_info);
    assert_non_null(p->supports);
    assert_non_null(p->mem_alloc);
    assert_non_null(p->mem_free);
    assert_non_null(p->upload);
    assert_non_null(p->download);
    assert_non_null(p->run);
    assert_non_null(p->finish);
    assert_non_null(p->drain_timings);
}

static void test_init_without_gpu(void **state)
{
    (void)state;
    const xo_plugin *p = xo_plugin_cuda();
    const xo__cuda_libs *libs = xo__cuda_load();
    assert_non_null(libs->driver_note);
    assert_non_null(libs->cublas_note);

    void *st = (void *)&st; /* init must overwrite it */
    int n = -1;
    xot_host_warnings = 0;
    xot_host_fault_asks = 0;
    assert_int_equal(p->init(&k_host, &st, &n), XO_OK);
    assert_true(n >= 0);
    if (n == 0) {
        /* Nothing found is no error and no warning. */
        assert_null(st);
        assert_int_equal(xot_host_warnings, 0);
        assert_int_equal(p->supports(st, 0, &(xo_op_desc){.kind = XO_OP_GEMM, .dtype = XO_F32}), 0);
    } else {
        /* A GPU machine: each device reports itself and runs both precisions. */
        assert_non_null(st);
        assert_true(libs->driver);
        for (int d = 0; d < n; d++) {
            xo_device_info info;
            assert_int_equal(p->device_info(st, d, &info), XO_OK);
            assert_string_equal(info.plugin, "cuda");
            assert_int_equal(info.fp64, 1);
            /* The embedded fatbin loads (SASS or PTX JIT) and cuBLAS is there. */
            assert_int_equal(p->supports(st, d, &(xo_op_desc){.kind = XO_OP_UNARY, .dtype = XO_F64}), 1);
            assert_int_equal(p->supports(st, d, &(xo_op_desc){.kind = XO_OP_REDUCE, .dtype = XO_F32}), 1);
            assert_int_equal(p->supports(st, d, &(xo_op_desc){.kind = XO_OP_GEMM, .dtype = XO_F64}), 1);
        }
        assert_int_equal(xot_host_fault_asks, n); /* "compile" asked once per device's module load */
        assert_int_equal(p->device_info(st, n, &(xo_device_info){0}), XO_ERR_INVALID_ARGUMENT);
    }
    p->shutdown(st);
}

/* ---- memory, copies, one kernel op, timings (skipped without a device) ------------------ */

static void test_device_roundtrip(void **state)
{
    (void)state;
    const xo_plugin *p = xo_plugin_cuda();
    void *st = NULL;
    int ndev = 0;
    assert_int_equal(p->init(&k_host, &st, &ndev), XO_OK);
    if (ndev == 0) skip();

    /* More than two staging chunks, and not a multiple of one. */
    const size_t n = (size_t)2 * XO_CUDA_STAGING_BYTES / sizeof(float) + 1000;
    const size_t bytes = n * sizeof(float);
    float *h = malloc(bytes), *back = malloc(bytes);
    assert_non_null(h);
    assert_non_null(back);
    for (size_t i = 0; i < n; i++) h[i] = (float)(i % 1000) - 500.0f;

    xo_plugin_mem *a = NULL, *b = NULL;
    assert_int_equal(p->mem_alloc(st, 0, bytes, &a), XO_OK);
    assert_int_equal(p->mem_alloc(st, 0, bytes, &b), XO_OK);
    assert_int_equal(p->upload(st, 0, a, 0, h, bytes), XO_OK);
    /* upload must not read src after returning. */
    memset(h, 0x7f, bytes);
    assert_int_equal(p->upload(st, 0, b, 0, h, bytes), XO_OK);

    /* b[3 + i] = -a[3 + i]; b[0..2] keep 0x7f bytes. */
    xo_op_desc op = {.kind = XO_OP_UNARY, .dtype = XO_F32, .subop = XO_NEG, .n = n - 3, .narg = 2};
    op.arg[0] = (xo_operand){.mem = a, .off = 3};
    op.arg[1] = (xo_operand){.mem = b, .off = 3};
    assert_int_equal(p->run(st, 0, &op, 42), XO_OK);
    assert_int_equal(p->download(st, 0, b, 0, back, bytes), XO_OK);
    float fill;
    memset(&fill, 0x7f, sizeof fill);
    for (size_t i = 0; i < n; i++) {
        float want = i < 3 ? fill : -((float)(i % 1000) - 500.0f);
        if (back[i] != want) fail_msg("element %zu: got %g want %g", i, (double)back[i], (double)want);
    }
    /* A partial download at an offset. */
    float part[4];
    assert_int_equal(p->download(st, 0, a, 4 * sizeof(float), part, sizeof part), XO_OK);
    for (int i = 0; i < 4; i++) assert_true(part[i] == (float)(4 + i) - 500.0f);
    /* Out of range. */
    assert_int_equal(p->download(st, 0, a, bytes - 4, part, 8), XO_ERR_INVALID_ARGUMENT);

    assert_int_equal(p->finish(st, 0), XO_OK);
    xo_op_timing t[8];
    int got = p->drain_timings(st, 0, t, 8);
    assert_int_equal(got, 1);
    assert_true(t[0].token == 42);
    assert_true(t[0].us >= 0);
    assert_int_equal(p->drain_timings(st, 0, t, 8), 0);

    p->mem_free(st, 0, a);
    p->mem_free(st, 0, b);
    free(h);
    free(back);
    p->shutdown(st);
}

/* ---- native codes ------------------------------------------------------------------------ */

static void test_error_names(void **state)
{
    (void)state;
    assert_string_equal(xo__cuda_result_name(2), "CUDA_ERROR_OUT_OF_MEMORY");
    assert_string_equal(xo__cuda_result_name(100), "CUDA_ERROR_NO_DEVICE");
    assert_string_equal(xo__cuda_result_name(700), "CUDA_ERROR_ILLEGAL_ADDRESS");
    assert_non_null(xo__cuda_result_name(123456));
    assert_string_equal(xo__cublas_status_name(3), "CUBLAS_STATUS_ALLOC_FAILED");
    assert_string_equal(xo__cublas_status_name(13), "CUBLAS_STATUS_EXECUTION_FAILED");
    assert_string_equal(xo__cublas_status_name(4242), "CUBLAS_STATUS_UNRECOGNIZED");

    assert_int_equal(xo__cuda_check(&k_host, 0, "cuInit"), XO_OK);
    assert_int_equal(xo__cuda_check(&k_host, 2, "cuMemAlloc_v2"), XO_ERR_OUT_OF_MEMORY);
    assert_non_null(strstr(xot_host_error, "cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY"));
    assert_int_equal(xo__cuda_check(&k_host, 719, "cuStreamSynchronize"), XO_ERR_DEVICE);
    assert_non_null(strstr(xot_host_error, "cuStreamSynchronize: CUDA_ERROR_LAUNCH_FAILED"));
    assert_int_equal(xo__cublas_check(&k_host, 0, "cublasSgemm_v2"), XO_OK);
    assert_int_equal(xo__cublas_check(&k_host, 13, "cublasSgemm_v2"), XO_ERR_DEVICE);
    assert_non_null(strstr(xot_host_error, "cublasSgemm_v2: CUBLAS_STATUS_EXECUTION_FAILED"));
    assert_int_equal(xo__cublas_check(&k_host, 3, "cublasCreate_v2"), XO_ERR_OUT_OF_MEMORY);
}

int main(void)
{
    k_host = xot_quiet_host("cuda");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fatbin_embedded),
        cmocka_unit_test(test_descriptor),
        cmocka_unit_test(test_init_without_gpu),
        cmocka_unit_test(test_device_roundtrip),
        cmocka_unit_test(test_error_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
