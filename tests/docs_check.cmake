# cmake -P script: what the docs promise a newcomer, read from the pages themselves.
# In: ROOT (the source tree). Fails with the page and the promise broken.
function(page var path)
  file(READ "${ROOT}/${path}" text)
  set(${var} "${text}" PARENT_SCOPE)
endfunction()
function(want text what)
  string(FIND "${text}" "${what}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${ARGN}: missing \"${what}\"")
  endif()
endfunction()
function(refuse text what)
  string(FIND "${text}" "${what}" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "${ARGN}: still says \"${what}\"")
  endif()
endfunction()

# scale-out.md: every shell block that runs the example works as root (Open MPI refuses
# root unless told), and the step as two plans is there to run.
page(scale "docs/scale-out.md")
string(REGEX MATCHALL "```sh[^`]*```" blocks "${scale}")
foreach(block IN LISTS blocks)
  if(block MATCHES "mpirun -np" AND block MATCHES "mpi_mlp" AND NOT block MATCHES "OMPI_ALLOW_RUN_AS_ROOT=1")
    message(FATAL_ERROR "docs/scale-out.md: a command block runs mpirun but not as root:\n${block}")
  endif()
endforeach()
want("${scale}" "--plan" "docs/scale-out.md")

# porting.md and README: the application's OpenBLAS thread count is kept.
page(porting "docs/porting.md")
want("${porting}" "## Beside the application's own BLAS calls" "docs/porting.md")
want("${porting}" "openblas_set_num_threads" "docs/porting.md")
want("${porting}" "examples/classifier" "docs/porting.md")
page(readme "README.md")
refuse("${readme}" "CPU threads (default: all cores)" "README.md")

# machines/README.md: recording is there to run, in xo and in .ci/gpu-check.
page(machines "docs/machines/README.md")
want("${machines}" "xo record [--out FILE]" "docs/machines/README.md")
refuse("${machines}" "(issue 29, Part 1.1)" "docs/machines/README.md")

# plans.md: no promise of bit-equal results that fusion does not keep.
page(plans "docs/plans.md")
refuse("${plans}" "Results equal the eager calls' (same kernels, same order)" "docs/plans.md")
want("${plans}" "rounding tolerance" "docs/plans.md")
# design.md: the conformance harness as it is (its table, comparisons and rule files).
page(design "docs/design.md")
file(READ "${ROOT}/tests/test_conformance.c" conformance)
want("${design}" "### The conformance harness" "docs/design.md")
foreach(name IN ITEMS "ROWS[]" XOC_CLOSE XOC_BITS XOC_FINITE xoc_writes xoc_arg_new XOC_OP XOC_REF)
  want("${design}" "${name}" "docs/design.md")
  want("${conformance}" "${name}" "tests/test_conformance.c (named in docs/design.md)")
endforeach()
refuse("${design}" "test_conformance_nn" "docs/design.md")
message(STATUS "docs: the newcomer's promises hold")
