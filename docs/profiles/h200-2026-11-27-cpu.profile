# crossover device profile v1
# Written by crossover; edit a copy for what-if questions (xo explain --profile).
# Figures: us = microseconds, gbps = GB/s (1e9 bytes), gflops = 1e9 flop/s.
plugin = cpu
name = Intel(R) Xeon(R) Processor
vendor = GenuineIntel
driver = OpenBLAS 0.3.21 SkylakeX, 16 threads
kind = cpu
host_unified = 1
fp64 = 1
launch_us = 0.129
transfer_latency_us = 0
h2d_gbps = 0
d2h_gbps = 0
mem_gbps = 164.074
peak_gflops = 1146.51
# gemm throughput (GFLOP/s) of square n x n x n products
sgemm_gflops_16 = 90.022
sgemm_gflops_32 = 157.161
sgemm_gflops_64 = 26.6312
sgemm_gflops_128 = 125.58
sgemm_gflops_256 = 569.907
sgemm_gflops_512 = 1013.92
sgemm_gflops_1024 = 980.15
sgemm_gflops_2048 = 1146.51
dgemm_gflops_16 = 43.2296
dgemm_gflops_32 = 64.6312
dgemm_gflops_64 = 19.4303
dgemm_gflops_128 = 63.7961
dgemm_gflops_256 = 250.781
dgemm_gflops_512 = 366.937
dgemm_gflops_1024 = 529.853
dgemm_gflops_2048 = 557.814
sstream_gbps = 164.074
dstream_gbps = 250.651
# a vector op of threaded_from elements or more pays thread_wake_us to wake the threads
thread_wake_us = 16.803
threaded_from = 65536
# worst (q3 - q1) / median of the repeated runs; provisional = 1: measured again later
spread = 0.893
provisional = 1
untrusted_runs = 1
library_version = 0.5.0
