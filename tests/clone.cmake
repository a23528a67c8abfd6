vocis_script_test(golden_clone_e2e golden/clone_e2e.sh)
vocis_script_test(cli_clone_bad_input cli/clone_bad_input.sh)
vocis_unit_test(test_voice_kind ${VOCIS_TEST_SRC}/unit/test_voice_kind.c)
