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
launch_us = 22.829
transfer_latency_us = 61.1765
h2d_gbps = 16777.2
d2h_gbps = 1689.63
mem_gbps = 85.4537
peak_gflops = 12.8216
# gemm throughput (GFLOP/s) of square n x n x n products
sgemm_gflops_16 = 0.12821
sgemm_gflops_32 = 11.993
sgemm_gflops_64 = 12.8216
sgemm_gflops_128 = 10.1878
sgemm_gflops_256 = 11.0842
sgemm_gflops_512 = 7.54411
sgemm_gflops_1024 = 7.54411
sgemm_gflops_2048 = 7.54411
dgemm_gflops_16 = 0.181289
dgemm_gflops_32 = 1.35483
dgemm_gflops_64 = 5.2834
dgemm_gflops_128 = 8.38398
dgemm_gflops_256 = 9.67395
dgemm_gflops_512 = 9.50647
dgemm_gflops_1024 = 9.50647
dgemm_gflops_2048 = 9.50647
sstream_gbps = 85.4537
dstream_gbps = 130.779
# worst (q3 - q1) / median of the repeated runs; provisional = 1: measured again later
spread = 0.665
provisional = 1
untrusted_runs = 1
library_version = 0.4.0
