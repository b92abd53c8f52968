# crossover device profile v1
# The host CPU beside the H200 of the 2026-11-26 visit (docs/cuda.md): 16 cores of an
# Intel Xeon on which Debian's OpenBLAS 0.3.21 ran its Prescott kernels. RECONSTRUCTED:
# the raw calibration log is gone; sgemm at 256^3 is what xo bench measured there
# (188 us, 178 GFLOP/s), the other figures are estimates for such a CPU and BLAS.
# Figures: us = microseconds, gbps = GB/s (1e9 bytes), gflops = 1e9 flop/s.
plugin = cpu
name = Intel Xeon (16 cores, OpenBLAS Prescott kernels)
vendor = GenuineIntel
driver = OpenBLAS 0.3.21 Prescott, 16 threads
kind = cpu
host_unified = 1
fp64 = 1
launch_us = 0.08
transfer_latency_us = 0
h2d_gbps = 0
d2h_gbps = 0
mem_gbps = 60
peak_gflops = 250
# gemm throughput (GFLOP/s) of square n x n x n products
sgemm_gflops_16 = 5
sgemm_gflops_32 = 20
sgemm_gflops_64 = 60
sgemm_gflops_128 = 120
sgemm_gflops_256 = 178
sgemm_gflops_512 = 220
sgemm_gflops_1024 = 240
sgemm_gflops_2048 = 250
dgemm_gflops_16 = 3
dgemm_gflops_32 = 11
dgemm_gflops_64 = 30
dgemm_gflops_128 = 60
dgemm_gflops_256 = 89
dgemm_gflops_512 = 110
dgemm_gflops_1024 = 120
dgemm_gflops_2048 = 125
# a vector op of threaded_from elements or more pays thread_wake_us to wake the threads.
# RECONSTRUCTED from docs/cuda.md: element-wise ops at 25K elements took 3-10x the ~3.4 us
# the streaming rate predicts (thread wake-ups across 16 cores); h200.xom's CPU rows
# record 14 us there. OpenBLAS and the plugin's loops thread from about 10K elements.
thread_wake_us = 10
threaded_from = 10001
sstream_gbps = 60
dstream_gbps = 60
spread = 0.1
provisional = 0
untrusted_runs = 0
library_version = 0.4.0
