vocis_unit_test(test_campplus ${VOCIS_TEST_SRC}/unit/test_campplus.c)
vocis_script_test(golden_campplus golden/campplus.sh)
