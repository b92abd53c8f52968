/* cl_status.c: the one place where OpenCL and CLBlast codes become names and xo_status. */
#include "cl_internal.h"

#include <stdio.h>

/* Numeric values so that codes newer than the headers' target version still get names. */
#define XO_CL_ERRORS(X)                                   \
    X(0, CL_SUCCESS)                                      \
    X(-1, CL_DEVICE_NOT_FOUND)                            \
    X(-2, CL_DEVICE_NOT_AVAILABLE)                        \
    X(-3, CL_COMPILER_NOT_AVAILABLE)                      \
    X(-4, CL_MEM_OBJECT_ALLOCATION_FAILURE)               \
    X(-5, CL_OUT_OF_RESOURCES)                            \
    X(-6, CL_OUT_OF_HOST_MEMORY)                          \
    X(-7, CL_PROFILING_INFO_NOT_AVAILABLE)                \
    X(-8, CL_MEM_COPY_OVERLAP)                            \
    X(-9, CL_IMAGE_FORMAT_MISMATCH)                       \
    X(-10, CL_IMAGE_FORMAT_NOT_SUPPORTED)                 \
    X(-11, CL_BUILD_PROGRAM_FAILURE)                      \
    X(-12, CL_MAP_FAILURE)                                \
    X(-13, CL_MISALIGNED_SUB_BUFFER_OFFSET)               \
    X(-14, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)  \
    X(-15, CL_COMPILE_PROGRAM_FAILURE)                    \
    X(-16, CL_LINKER_NOT_AVAILABLE)                       \
    X(-17, CL_LINK_PROGRAM_FAILURE)                       \
    X(-18, CL_DEVICE_PARTITION_FAILED)                    \
    X(-19, CL_KERNEL_ARG_INFO_NOT_AVAILABLE)              \
    X(-30, CL_INVALID_VALUE)                              \
    X(-31, CL_INVALID_DEVICE_TYPE)                        \
    X(-32, CL_INVALID_PLATFORM)                           \
    X(-33, CL_INVALID_DEVICE)                             \
    X(-34, CL_INVALID_CONTEXT)                            \
    X(-35, CL_INVALID_QUEUE_PROPERTIES)                   \
    X(-36, CL_INVALID_COMMAND_QUEUE)                      \
    X(-37, CL_INVALID_HOST_PTR)                           \
    X(-38, CL_INVALID_MEM_OBJECT)                         \
    X(-39, CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)            \
    X(-40, CL_INVALID_IMAGE_SIZE)                         \
    X(-41, CL_INVALID_SAMPLER)                            \
    X(-42, CL_INVALID_BINARY)                             \
    X(-43, CL_INVALID_BUILD_OPTIONS)                      \
    X(-44, CL_INVALID_PROGRAM)                            \
    X(-45, CL_INVALID_PROGRAM_EXECUTABLE)                 \
    X(-46, CL_INVALID_KERNEL_NAME)                        \
    X(-47, CL_INVALID_KERNEL_DEFINITION)                  \
    X(-48, CL_INVALID_KERNEL)                             \
    X(-49, CL_INVALID_ARG_INDEX)                          \
    X(-50, CL_INVALID_ARG_VALUE)                          \
    X(-51, CL_INVALID_ARG_SIZE)                           \
    X(-52, CL_INVALID_KERNEL_ARGS)                        \
    X(-53, CL_INVALID_WORK_DIMENSION)                     \
    X(-54, CL_INVALID_WORK_GROUP_SIZE)                    \
    X(-55, CL_INVALID_WORK_ITEM_SIZE)                     \
    X(-56, CL_INVALID_GLOBAL_OFFSET)                      \
    X(-57, CL_INVALID_EVENT_WAIT_LIST)                    \
    X(-58, CL_INVALID_EVENT)                              \
    X(-59, CL_INVALID_OPERATION)                          \
    X(-60, CL_INVALID_GL_OBJECT)                          \
    X(-61, CL_INVALID_BUFFER_SIZE)                        \
    X(-62, CL_INVALID_MIP_LEVEL)                          \
    X(-63, CL_INVALID_GLOBAL_WORK_SIZE)                   \
    X(-64, CL_INVALID_PROPERTY)                           \
    X(-65, CL_INVALID_IMAGE_DESCRIPTOR)                   \
    X(-66, CL_INVALID_COMPILER_OPTIONS)                   \
    X(-67, CL_INVALID_LINKER_OPTIONS)                     \
    X(-68, CL_INVALID_DEVICE_PARTITION_COUNT)             \
    X(-69, CL_INVALID_PIPE_SIZE)                          \
    X(-70, CL_INVALID_DEVICE_QUEUE)                       \
    X(-71, CL_INVALID_SPEC_ID)                            \
    X(-72, CL_MAX_SIZE_RESTRICTION_EXCEEDED)              \
    X(-1001, CL_PLATFORM_NOT_FOUND_KHR)

#define XO_CLBLAST_STATUSES(X)                                                        \
    X(CLBlastSuccess) X(CLBlastOpenCLCompilerNotAvailable) X(CLBlastTempBufferAllocFailure) \
    X(CLBlastOpenCLOutOfResources) X(CLBlastOpenCLOutOfHostMemory)                    \
    X(CLBlastOpenCLBuildProgramFailure) X(CLBlastInvalidValue)                        \
    X(CLBlastInvalidCommandQueue) X(CLBlastInvalidMemObject) X(CLBlastInvalidBinary)  \
    X(CLBlastInvalidBuildOptions) X(CLBlastInvalidProgram)                            \
    X(CLBlastInvalidProgramExecutable) X(CLBlastInvalidKernelName)                    \
    X(CLBlastInvalidKernelDefinition) X(CLBlastInvalidKernel) X(CLBlastInvalidArgIndex) \
    X(CLBlastInvalidArgValue) X(CLBlastInvalidArgSize) X(CLBlastInvalidKernelArgs)    \
    X(CLBlastInvalidLocalNumDimensions) X(CLBlastInvalidLocalThreadsTotal)            \
    X(CLBlastInvalidLocalThreadsDim) X(CLBlastInvalidGlobalOffset)                    \
    X(CLBlastInvalidEventWaitList) X(CLBlastInvalidEvent) X(CLBlastInvalidOperation)  \
    X(CLBlastInvalidBufferSize) X(CLBlastInvalidGlobalWorkSize)                       \
    X(CLBlastNotImplemented) X(CLBlastInvalidMatrixA) X(CLBlastInvalidMatrixB)        \
    X(CLBlastInvalidMatrixC) X(CLBlastInvalidVectorX) X(CLBlastInvalidVectorY)        \
    X(CLBlastInvalidDimension) X(CLBlastInvalidLeadDimA) X(CLBlastInvalidLeadDimB)    \
    X(CLBlastInvalidLeadDimC) X(CLBlastInvalidIncrementX) X(CLBlastInvalidIncrementY) \
    X(CLBlastInsufficientMemoryA) X(CLBlastInsufficientMemoryB)                       \
    X(CLBlastInsufficientMemoryC) X(CLBlastInsufficientMemoryX)                       \
    X(CLBlastInsufficientMemoryY) X(CLBlastInsufficientMemoryTemp)                    \
    X(CLBlastInvalidBatchCount) X(CLBlastInvalidOverrideKernel)                       \
    X(CLBlastMissingOverrideParameter) X(CLBlastInvalidLocalMemUsage)                 \
    X(CLBlastNoHalfPrecision) X(CLBlastNoDoublePrecision)                             \
    X(CLBlastInvalidVectorScalar) X(CLBlastInsufficientMemoryScalar)                  \
    X(CLBlastDatabaseError) X(CLBlastUnknownError) X(CLBlastUnexpectedError)

static const char *cl_error_lookup(cl_int err)
{
    switch (err) {
#define XO_CL_CASE(code, name) \
    case code:                 \
        return #name;
        XO_CL_ERRORS(XO_CL_CASE)
#undef XO_CL_CASE
    default:
        return NULL;
    }
}

const char *xo__cl_error_name(cl_int err)
{
    const char *name = cl_error_lookup(err);
    return name ? name : "CL_UNKNOWN_ERROR";
}

const char *xo__clblast_status_name(CLBlastStatusCode s)
{
    switch (s) {
#define XO_CLBLAST_CASE(name) \
    case name:                \
        return #name;
        XO_CLBLAST_STATUSES(XO_CLBLAST_CASE)
#undef XO_CLBLAST_CASE
    }
    return "CLBlastUnknownStatus";
}

xo_status xo__cl_status(cl_int err)
{
    switch (err) {
    case CL_SUCCESS:
        return XO_OK;
    case CL_MEM_OBJECT_ALLOCATION_FAILURE:
    case CL_OUT_OF_RESOURCES:
    case CL_OUT_OF_HOST_MEMORY:
        return XO_ERR_OUT_OF_MEMORY;
    default:
        return XO_ERR_DEVICE;
    }
}

xo_status xo__clblast_status(CLBlastStatusCode s)
{
    switch (s) {
    case CLBlastSuccess:
        return XO_OK;
    case CLBlastTempBufferAllocFailure:
    case CLBlastOpenCLOutOfResources:
    case CLBlastOpenCLOutOfHostMemory:
        return XO_ERR_OUT_OF_MEMORY;
    case CLBlastNoDoublePrecision:
    case CLBlastNoHalfPrecision:
    case CLBlastNotImplemented:
        return XO_ERR_UNSUPPORTED;
    default:
        return XO_ERR_DEVICE;
    }
}

xo_status xo__cl_fail(const xo_plugin_host *host, const char *call, cl_int err)
{
    xo_status s = xo__cl_status(err);
    if (s == XO_OK) s = XO_ERR_DEVICE; /* a caller that fails on CL_SUCCESS still fails */
    const char *name = cl_error_lookup(err);
    if (!name) return host->set_error(s, "%s: unknown OpenCL error %d", call, (int)err);
    return host->set_error(s, "%s: %s", call, name);
}

xo_status xo__clblast_fail(const xo_plugin_host *host, const char *call, CLBlastStatusCode st)
{
    xo_status s = xo__clblast_status(st);
    if (s == XO_OK) s = XO_ERR_DEVICE;
    return host->set_error(s, "%s: %s (%d)", call, xo__clblast_status_name(st), (int)st);
}
