vocis_unit_test(test_t3_batch ${VOCIS_TEST_SRC}/unit/test_t3_batch.c)
vocis_unit_test(test_speak_concurrent ${VOCIS_TEST_SRC}/unit/test_speak_concurrent.c)
vocis_unit_test(test_t3_spec ${VOCIS_TEST_SRC}/unit/test_t3_spec.c)
vocis_unit_test(test_voice_cache ${VOCIS_TEST_SRC}/unit/test_voice_cache.c)
