vocis_script_test(golden_qwen2 golden/qwen2.sh)
vocis_unit_test(test_lm_cache ${VOCIS_TEST_SRC}/unit/test_lm_cache.c)
