vocis_unit_test(test_s3gen_flow ${VOCIS_TEST_SRC}/unit/test_s3gen_flow.c)
vocis_script_test(golden_s3gen_flow golden/s3gen_flow.sh)
vocis_unit_test(test_s3gen_stream ${VOCIS_TEST_SRC}/unit/test_s3gen_stream.c)
