# Chatterbox-Multilingual: text front end (every 00_text.json case), the .pt weight sets,
# T3 / S3Gen / HiFT / cloning stages on the tiny multilingual folder, end to end, bad input.
vocis_unit_test(test_mtl_text ${VOCIS_TEST_SRC}/unit/test_mtl_text.c)
vocis_unit_test(test_mtl ${VOCIS_TEST_SRC}/unit/test_mtl.c)
vocis_script_test(golden_mtl golden/mtl.sh)
vocis_script_test(cli_mtl_bad_input cli/mtl_bad_input.sh)
