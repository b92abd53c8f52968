# crossover device profile v1
# Written by crossover; edit a copy for what-if questions (xo explain --profile).
# Figures: us = microseconds, gbps = GB/s (1e9 bytes), gflops = 1e9 flop/s.
plugin = cuda
name = NVIDIA H200
vendor = NVIDIA
driver = CUDA 13.0 sm_90 cuBLAS 13.1.0
kind = gpu
host_unified = 0
fp64 = 1
launch_us = 15.1825
transfer_latency_us = 8.03
h2d_gbps = 6.95933
d2h_gbps = 8.22599
mem_gbps = 4754.77
peak_gflops = 46944.9
# gemm throughput (GFLOP/s) of square n x n x n products
sgemm_gflops_16 = 1.00012
sgemm_gflops_32 = 7.9279
sgemm_gflops_64 = 48.1418
sgemm_gflops_128 = 438.918
sgemm_gflops_256 = 2062.6
sgemm_gflops_512 = 13291.5
sgemm_gflops_1024 = 26003.9
sgemm_gflops_2048 = 46944.9
dgemm_gflops_16 = 0.576678
dgemm_gflops_32 = 8.06002
dgemm_gflops_64 = 43.879
dgemm_gflops_128 = 368.665
dgemm_gflops_256 = 2745.64
dgemm_gflops_512 = 19241.3
dgemm_gflops_1024 = 44909.1
dgemm_gflops_2048 = 56091
sstream_gbps = 4754.77
dstream_gbps = 7722.54
# worst (q3 - q1) / median of the repeated runs; provisional = 1: measured again later
spread = 0.23
provisional = 0
untrusted_runs = 0
library_version = 0.5.0
