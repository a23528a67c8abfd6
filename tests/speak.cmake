vocis_unit_test(test_sentences ${VOCIS_TEST_SRC}/unit/test_sentences.c)
