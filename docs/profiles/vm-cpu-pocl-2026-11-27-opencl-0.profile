# crossover device profile v1
# Written by crossover; edit a copy for what-if questions (xo explain --profile).
# Figures: us = microseconds, gbps = GB/s (1e9 bytes), gflops = 1e9 flop/s.
plugin = opencl
name = pthread-skylake-avx512-AMD EPYC
vendor = AuthenticAMD
driver = 3.1+debian
kind = cpu
host_unified = 1
fp64 = 1
launch_us = 58.612
transfer_latency_us = 71.7575
h2d_gbps = 16777.2
d2h_gbps = 3252.97
mem_gbps = 64.1892
peak_gflops = 11.233
# gemm throughput (GFLOP/s) of square n x n x n products
sgemm_gflops_16 = 0.430032
sgemm_gflops_32 = 3.61915
sgemm_gflops_64 = 10.7905
sgemm_gflops_128 = 10.2134
sgemm_gflops_256 = 11.233
sgemm_gflops_512 = 5.34414
sgemm_gflops_1024 = 5.34414
sgemm_gflops_2048 = 5.34414
dgemm_gflops_16 = 0.520016
dgemm_gflops_32 = 2.44127
dgemm_gflops_64 = 7.74932
dgemm_gflops_128 = 9.40247
dgemm_gflops_256 = 6.31873
dgemm_gflops_512 = 5.59918
dgemm_gflops_1024 = 5.59918
dgemm_gflops_2048 = 5.59918
sstream_gbps = 64.1892
dstream_gbps = 69.6379
# worst (q3 - q1) / median of the repeated runs; provisional = 1: measured again later
spread = 1.42
provisional = 1
untrusted_runs = 1
library_version = 0.4.0
