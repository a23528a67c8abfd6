vocis_script_test(cli_t3_bad_input cli/t3_bad_input.sh)
