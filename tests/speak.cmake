vocis_unit_test(test_sentences ${VOCIS_TEST_SRC}/unit/test_sentences.c)
vocis_script_test(golden_speak_e2e golden/speak_e2e.sh)
vocis_unit_test(test_s3gen_tokens ${VOCIS_TEST_SRC}/unit/test_s3gen_tokens.c)
