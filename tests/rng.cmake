# Torch-compatible RNG and the logits processors / token choice.
vocis_unit_test(test_rng ${VOCIS_TEST_SRC}/unit/test_rng.c)
vocis_unit_test(test_sampling ${VOCIS_TEST_SRC}/unit/test_sampling.c)
