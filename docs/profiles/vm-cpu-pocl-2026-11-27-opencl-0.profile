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
launch_us = 33.1495
transfer_latency_us = 48.4775
h2d_gbps = 16777.2
d2h_gbps = 1081.88
mem_gbps = 70.3578
peak_gflops = 34.201
# gemm throughput (GFLOP/s) of square n x n x n products
sgemm_gflops_16 = 0.383934
sgemm_gflops_32 = 2.5087
sgemm_gflops_64 = 7.91874
sgemm_gflops_128 = 11.4418
sgemm_gflops_256 = 24.1505
sgemm_gflops_512 = 24.4317
sgemm_gflops_1024 = 34.201
sgemm_gflops_2048 = 34.201
dgemm_gflops_16 = 0.533056
dgemm_gflops_32 = 7.29627
dgemm_gflops_64 = 26.6278
dgemm_gflops_128 = 19.9464
dgemm_gflops_256 = 21.1168
dgemm_gflops_512 = 21.5262
dgemm_gflops_1024 = 20.4636
dgemm_gflops_2048 = 20.4636
sstream_gbps = 70.3578
dstream_gbps = 74.4664
# worst (q3 - q1) / median of the repeated runs; provisional = 1: measured again later
spread = 0.676
provisional = 1
untrusted_runs = 1
library_version = 0.5.0
