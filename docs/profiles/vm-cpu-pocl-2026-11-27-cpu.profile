# crossover device profile v1
# Written by crossover; edit a copy for what-if questions (xo explain --profile).
# Figures: us = microseconds, gbps = GB/s (1e9 bytes), gflops = 1e9 flop/s.
plugin = cpu
name = AMD EPYC
vendor = AuthenticAMD
driver = OpenBLAS 0.3.21 Haswell, 2 threads
kind = cpu
host_unified = 1
fp64 = 1
launch_us = 0.0699997
transfer_latency_us = 0
h2d_gbps = 0
d2h_gbps = 0
mem_gbps = 173.197
peak_gflops = 202.352
# gemm throughput (GFLOP/s) of square n x n x n products
sgemm_gflops_16 = 45.385
sgemm_gflops_32 = 87.791
sgemm_gflops_64 = 111.86
sgemm_gflops_128 = 136.596
sgemm_gflops_256 = 183.39
sgemm_gflops_512 = 202.352
sgemm_gflops_1024 = 92.4253
sgemm_gflops_2048 = 92.4253
dgemm_gflops_16 = 27.3066
dgemm_gflops_32 = 43.618
dgemm_gflops_64 = 51.9354
dgemm_gflops_128 = 64.3673
dgemm_gflops_256 = 85.9748
dgemm_gflops_512 = 46.5971
dgemm_gflops_1024 = 53.6925
dgemm_gflops_2048 = 53.6925
sstream_gbps = 173.197
dstream_gbps = 181.99
# worst (q3 - q1) / median of the repeated runs; provisional = 1: measured again later
spread = 1.58
provisional = 1
untrusted_runs = 1
library_version = 0.4.0
