# Tensor kernels: unit test, and the bench_linear tool (built, not run by ctest).
vocis_unit_test(test_kernels ${VOCIS_TEST_SRC}/unit/test_kernels.c)

add_executable(bench_linear ${VOCIS_TEST_SRC}/../bench/bench_linear.c)
target_link_libraries(bench_linear PRIVATE vocis_static)
set_target_properties(bench_linear PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
add_executable(bench_attention ${VOCIS_TEST_SRC}/../bench/bench_attention.c)
target_link_libraries(bench_attention PRIVATE vocis_static)
set_target_properties(bench_attention PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)

# The kernels' thread pool: chunks, nesting, concurrent callers, bits across thread counts.
vocis_unit_test(test_pool ${VOCIS_TEST_SRC}/unit/test_pool.c)
# The kernels moved from OpenMP to the pool: bits across thread counts.
vocis_unit_test(test_pool_kernels ${VOCIS_TEST_SRC}/unit/test_pool_kernels.c)
