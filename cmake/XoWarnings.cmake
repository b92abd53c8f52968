# Warning flags for every crossover target: the build stays warning-free with these.
function(xo_target_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:C>:-Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes>)
endfunction()
