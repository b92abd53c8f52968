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
launch_us = 0.0700002
transfer_latency_us = 0
h2d_gbps = 0
d2h_gbps = 0
mem_gbps = 78.4806
peak_gflops = 115.147
# gemm throughput (GFLOP/s) of square n x n x n products
sgemm_gflops_16 = 48.0469
sgemm_gflops_32 = 89.6525
sgemm_gflops_64 = 112.339
sgemm_gflops_128 = 99.8228
sgemm_gflops_256 = 115.147
sgemm_gflops_512 = 58.2073
sgemm_gflops_1024 = 64.6998
sgemm_gflops_2048 = 64.6998
dgemm_gflops_16 = 29.2572
dgemm_gflops_32 = 44.7956
dgemm_gflops_64 = 52.8783
dgemm_gflops_128 = 50.4402
dgemm_gflops_256 = 55.0901
dgemm_gflops_512 = 25.1749
dgemm_gflops_1024 = 30.008
dgemm_gflops_2048 = 30.008
sstream_gbps = 78.4806
dstream_gbps = 74.7222
# worst (q3 - q1) / median of the repeated runs; provisional = 1: measured again later
spread = 1.23
provisional = 1
untrusted_runs = 1
library_version = 0.4.0
