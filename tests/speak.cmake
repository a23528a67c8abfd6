vocis_unit_test(test_sentences ${VOCIS_TEST_SRC}/unit/test_sentences.c)
vocis_script_test(golden_speak_e2e golden/speak_e2e.sh)
vocis_unit_test(test_s3gen_tokens ${VOCIS_TEST_SRC}/unit/test_s3gen_tokens.c)
# Long-form output (issue 22): --chapters, and a file that survives kill -9.
vocis_script_test(cli_speak_chapters cli/speak_chapters.sh)
vocis_script_test(cli_speak_kill cli/speak_kill.sh)
vocis_unit_test(test_turn_cues ${VOCIS_TEST_SRC}/unit/test_turn_cues.c)
# --subtitles: valid SRT / WebVTT cues per chunk / turn, tiling the audio
vocis_script_test(cli_speak_subtitles cli/speak_subtitles.sh)
set_tests_properties(cli_speak_chapters cli_speak_kill cli_speak_subtitles PROPERTIES TIMEOUT 120)
vocis_unit_test(test_speak_unkept ${VOCIS_TEST_SRC}/unit/test_speak_unkept.c)
vocis_unit_test(test_speak_stream ${VOCIS_TEST_SRC}/unit/test_speak_stream.c)
vocis_script_test(cli_speak_stream cli/speak_stream.sh)
# Resumable jobs (issue 22 item 4): --checkpoint / --resume of Chatterbox long text.
vocis_script_test(cli_speak_resume cli/speak_resume.sh)
set_tests_properties(cli_speak_resume PROPERTIES TIMEOUT 300)
