# Torch-compatible RNG, the logits processors / token choice, the speculation controller.
vocis_unit_test(test_rng ${VOCIS_TEST_SRC}/unit/test_rng.c)
vocis_unit_test(test_sampling ${VOCIS_TEST_SRC}/unit/test_sampling.c)
vocis_unit_test(test_speculate ${VOCIS_TEST_SRC}/unit/test_speculate.c)
