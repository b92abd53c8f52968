/* The OpenCL plugin's error translation (plugins/opencl/cl_status.c): every code has its
 * name, out-of-memory codes map to XO_ERR_OUT_OF_MEMORY, and the detail names the call. */
#include "cl_internal.h"
#include "xo_test.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

static xo_plugin_host g_host; /* xo_test.c's quiet host, set in main */

static void test_cl_names(void **state)
{
    (void)state;
    assert_string_equal(xo__cl_error_name(CL_SUCCESS), "CL_SUCCESS");
    assert_string_equal(xo__cl_error_name(CL_OUT_OF_RESOURCES), "CL_OUT_OF_RESOURCES");
    assert_string_equal(xo__cl_error_name(CL_INVALID_KERNEL_ARGS), "CL_INVALID_KERNEL_ARGS");
    assert_string_equal(xo__cl_error_name(CL_INVALID_GLOBAL_WORK_SIZE), "CL_INVALID_GLOBAL_WORK_SIZE");
    assert_string_equal(xo__cl_error_name(-1001), "CL_PLATFORM_NOT_FOUND_KHR");
    assert_string_equal(xo__cl_error_name(-72), "CL_MAX_SIZE_RESTRICTION_EXCEEDED");
    assert_string_equal(xo__cl_error_name(-20), "CL_UNKNOWN_ERROR");
    /* Every standard code from 0 to -72 that exists has a CL_ name. */
    for (int c = 0; c >= -72; c--) assert_int_equal(strncmp(xo__cl_error_name(c), "CL_", 3), 0);
}

static void test_cl_status_mapping(void **state)
{
    (void)state;
    assert_int_equal(xo__cl_status(CL_SUCCESS), XO_OK);
    assert_int_equal(xo__cl_status(CL_MEM_OBJECT_ALLOCATION_FAILURE), XO_ERR_OUT_OF_MEMORY);
    assert_int_equal(xo__cl_status(CL_OUT_OF_HOST_MEMORY), XO_ERR_OUT_OF_MEMORY);
    assert_int_equal(xo__cl_status(CL_OUT_OF_RESOURCES), XO_ERR_OUT_OF_MEMORY);
    assert_int_equal(xo__cl_status(CL_INVALID_KERNEL_ARGS), XO_ERR_DEVICE);
    assert_int_equal(xo__cl_status(CL_BUILD_PROGRAM_FAILURE), XO_ERR_DEVICE);
}

static void test_cl_fail_message(void **state)
{
    (void)state;
    assert_int_equal(xo__cl_fail(&g_host, "clEnqueueNDRangeKernel", CL_INVALID_WORK_GROUP_SIZE), XO_ERR_DEVICE);
    assert_string_equal(xot_host_error, "clEnqueueNDRangeKernel: CL_INVALID_WORK_GROUP_SIZE");
    assert_int_equal(xo__cl_fail(&g_host, "clCreateBuffer", CL_MEM_OBJECT_ALLOCATION_FAILURE), XO_ERR_OUT_OF_MEMORY);
    assert_string_equal(xot_host_error, "clCreateBuffer: CL_MEM_OBJECT_ALLOCATION_FAILURE");
    /* A code without a name still fails and shows its number. */
    assert_int_equal(xo__cl_fail(&g_host, "clFinish", -9999), XO_ERR_DEVICE);
    assert_non_null(strstr(xot_host_error, "clFinish"));
    assert_non_null(strstr(xot_host_error, "-9999"));
}

static void test_clblast_names(void **state)
{
    (void)state;
    assert_string_equal(xo__clblast_status_name(CLBlastSuccess), "CLBlastSuccess");
    assert_string_equal(xo__clblast_status_name(CLBlastInvalidLeadDimA), "CLBlastInvalidLeadDimA");
    assert_string_equal(xo__clblast_status_name(CLBlastNoDoublePrecision), "CLBlastNoDoublePrecision");
    assert_string_equal(xo__clblast_status_name((CLBlastStatusCode)-12345), "CLBlastUnknownStatus");
    assert_int_equal(xo__clblast_status(CLBlastTempBufferAllocFailure), XO_ERR_OUT_OF_MEMORY);
    assert_int_equal(xo__clblast_status(CLBlastInvalidLeadDimA), XO_ERR_DEVICE);
    assert_int_equal(xo__clblast_status(CLBlastNoDoublePrecision), XO_ERR_UNSUPPORTED);
    assert_int_equal(xo__clblast_fail(&g_host, "CLBlastSgemm", CLBlastInsufficientMemoryC), XO_ERR_DEVICE);
    assert_non_null(strstr(xot_host_error, "CLBlastSgemm: CLBlastInsufficientMemoryC"));
}

int main(void)
{
    g_host = xot_quiet_host("opencl");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cl_names),
        cmocka_unit_test(test_cl_status_mapping),
        cmocka_unit_test(test_cl_fail_message),
        cmocka_unit_test(test_clblast_names),
    };
    return cmocka_run_group_tests_name("opencl status translation", tests, NULL, NULL);
}
