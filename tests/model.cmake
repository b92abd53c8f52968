# Placement's brain: the cost model, built-in defaults, online correction (no device
# needed), profile files, and the profile cache through the public API.
xo_add_test(test_model SOURCES test_model.c LIBS crossover_internal m ENV XO_CALIBRATE=off)
# Measures every device here once (a few seconds with PoCL), then reads the cache.
xo_add_test(test_profile SOURCES test_profile.c LIBS xo_testutil crossover_internal m)
