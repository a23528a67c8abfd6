vocis_unit_test(test_hift ${VOCIS_TEST_SRC}/unit/test_hift.c)
vocis_script_test(golden_hift golden/hift.sh)
vocis_script_test(golden_hift_bf16 golden/hift_bf16.sh)
