# `vocis bench`: the statistics helper (min / median / max line) as a unit test, and the format
# of the repeated figures on the smallest synthetic runs (no timing values are asserted).
vocis_unit_test(test_bench_stats ${VOCIS_TEST_SRC}/unit/test_bench_stats.c ${CMAKE_SOURCE_DIR}/src/cli/bench_util.c)
# the limits every hot-path figure is a fraction of: work counts from matrices and the note's form
vocis_unit_test(test_bench_limits ${VOCIS_TEST_SRC}/unit/test_bench_limits.c ${CMAKE_SOURCE_DIR}/src/cli/bench_limits.c)
vocis_script_test(cli_bench_stats cli/bench_stats.sh)
