vocis_script_test(cli_info cli/info.sh)
