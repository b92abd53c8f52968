! A Fortran program built against -lblas, unchanged: gemm, gemv, axpy, dot, nrm2, scal
! (run by crossover) and trsm (forwarded), checked against plain loops. Prints "fortran ok".
program blas_fortran
  implicit none
  integer, parameter :: n = 150
  double precision :: a(n, n), b(n, n), c(n, n), r(n, n), x(n), y(n), yr(n)
  real :: sa(n, n), sb(n, n), sc(n, n)
  double precision :: d, ddot, dnrm2, err
  integer :: i, j
  external dgemm, sgemm, dgemv, daxpy, dscal, dtrsm, ddot, dnrm2
  do j = 1, n
    do i = 1, n
      a(i, j) = sin(dble(i + 2 * j))
      b(i, j) = cos(dble(3 * i - j))
    end do
    x(j) = sin(dble(j))
    y(j) = cos(dble(j))
  end do
  c = 1d0
  call dgemm('N', 'T', n, n, n, 0.5d0, a, n, b, n, 2d0, c, n)
  r = 0.5d0 * matmul(a, transpose(b)) + 2d0
  err = maxval(abs(c - r))
  sa = real(a); sb = real(b); sc = 0.0
  call sgemm('T', 'N', n, n, n, 1.0, sa, n, sb, n, 0.0, sc, n)
  err = max(err, maxval(abs(sc - matmul(transpose(sa), sb))) * 1d-4)
  yr = 1.5d0 * matmul(a, x) - y
  call dgemv('N', n, n, 1.5d0, a, n, x, 1, -1d0, y, 1)
  err = max(err, maxval(abs(y - yr)))
  yr = y + 3d0 * x
  call daxpy(n, 3d0, x, 1, y, 1)
  err = max(err, maxval(abs(y - yr)))
  d = ddot(n, x, 1, y, 1)
  err = max(err, abs(d - sum(x * y)) / n)
  err = max(err, abs(dnrm2(n, x, 1) - sqrt(sum(x * x))))
  call dscal(n, 2d0, y, 1)
  err = max(err, maxval(abs(y - 2d0 * yr)))
  ! forwarded to the CPU BLAS: solve L Z = B for a well-conditioned lower-triangular L
  do j = 1, n
    do i = 1, n
      if (i < j) a(i, j) = 0d0
    end do
    a(j, j) = a(j, j) + n
  end do
  c = b
  call dtrsm('L', 'L', 'N', 'N', n, n, 1d0, a, n, c, n)
  err = max(err, maxval(abs(matmul(a, c) - b)))
  if (err > 1d-8) then
    print *, 'fortran FAILED, error', err
    stop 1
  end if
  print *, 'fortran ok'
end program blas_fortran
