vocis_script_test(cli_t3_bad_input cli/t3_bad_input.sh)
vocis_script_test(cli_speak_bad_input cli/speak_bad_input.sh)
vocis_script_test(cli_vv_lm_bad_input cli/vv_lm_bad_input.sh)
vocis_script_test(cli_voice_kind cli/voice_kind.sh)
