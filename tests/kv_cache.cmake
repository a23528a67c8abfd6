# bf16 KV cache (issue 13): kernel at every ISA level + transformer behaviour.
vocis_unit_test(test_kv_cache ${VOCIS_TEST_SRC}/unit/test_kv_cache.c)
vocis_script_test(golden_kv_bf16 golden/kv_bf16.sh)
