vocis_unit_test(test_conv ${VOCIS_TEST_SRC}/unit/test_conv.c)
