# Chatterbox-Turbo / -Nano (issue 12): text front end, GPT-2 T3, meanflow S3Gen, end to end;
# self-speculative decoding of the GPT-2 T3 (issue 20).
vocis_unit_test(test_turbo_text ${VOCIS_TEST_SRC}/unit/test_turbo_text.c)
vocis_script_test(golden_turbo_stages golden/turbo_stages.sh)
vocis_script_test(golden_turbo_e2e golden/turbo_e2e.sh)
vocis_unit_test(test_turbo_spec ${VOCIS_TEST_SRC}/unit/test_turbo_spec.c)
