# crossover device profile v1
# The NVIDIA H200 of the 2026-11-26 visit (docs/cuda.md), RECONSTRUCTED: the raw
# calibration log is gone; launch_us, transfer_latency_us, h2d_gbps, d2h_gbps, mem_gbps
# and the top of the sgemm curve are docs/cuda.md's ranges (midpoints), the rest of the
# curves are shaped so that 256^3 takes what xo bench measured there (23.8 us with a wait).
# Figures: us = microseconds, gbps = GB/s (1e9 bytes), gflops = 1e9 flop/s.
plugin = cuda
name = NVIDIA H200
vendor = NVIDIA Corporation
driver = 580.159.04, CUDA 13.0, cuBLAS 13.1.0
kind = gpu
host_unified = 0
fp64 = 1
launch_us = 14
transfer_latency_us = 6.8
h2d_gbps = 11.5
d2h_gbps = 12.5
mem_gbps = 4200
peak_gflops = 50000
# The calling thread's share of launch_us when ops are queued (the rest, 3.5 us, is the
# kernel's floor and the completion): the machine file's reconstructed split (issue_us
# 10.5 there). Plans and repeating eager episodes are priced with it (docs/placement.md).
issue_us = 10.5
# gemm throughput (GFLOP/s) of square n x n x n products
sgemm_gflops_16 = 0.6
sgemm_gflops_32 = 4.6
sgemm_gflops_64 = 36
sgemm_gflops_128 = 270
sgemm_gflops_256 = 1410
sgemm_gflops_512 = 8900
sgemm_gflops_1024 = 30000
sgemm_gflops_2048 = 50000
dgemm_gflops_16 = 0.6
dgemm_gflops_32 = 4.4
dgemm_gflops_64 = 33
dgemm_gflops_128 = 230
dgemm_gflops_256 = 1100
dgemm_gflops_512 = 5500
dgemm_gflops_1024 = 16000
dgemm_gflops_2048 = 25000
sstream_gbps = 4200
dstream_gbps = 4200
spread = 0.1
provisional = 0
untrusted_runs = 0
library_version = 0.4.0
