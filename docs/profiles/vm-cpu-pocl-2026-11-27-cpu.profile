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
mem_gbps = 171.413
peak_gflops = 255.442
# gemm throughput (GFLOP/s) of square n x n x n products
sgemm_gflops_16 = 136.532
sgemm_gflops_32 = 167.611
sgemm_gflops_64 = 114.423
sgemm_gflops_128 = 212.801
sgemm_gflops_256 = 239.943
sgemm_gflops_512 = 250.833
sgemm_gflops_1024 = 250.636
sgemm_gflops_2048 = 255.442
dgemm_gflops_16 = 58.0994
dgemm_gflops_32 = 88.4426
dgemm_gflops_64 = 54.9885
dgemm_gflops_128 = 101.002
dgemm_gflops_256 = 113.076
dgemm_gflops_512 = 120.638
dgemm_gflops_1024 = 123.003
dgemm_gflops_2048 = 125.09
sstream_gbps = 171.413
dstream_gbps = 196.861
# a vector op of threaded_from elements or more pays thread_wake_us to wake the threads
thread_wake_us = 0.198999
threaded_from = 10001
# worst (q3 - q1) / median of the repeated runs; provisional = 1: measured again later
spread = 0.0335
provisional = 0
untrusted_runs = 0
library_version = 0.5.0
