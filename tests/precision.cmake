# Precision policy (kernels/precision.h): conversion kernel and load-time
# conversion (unit), and the bf16 mode against the goldens with its own tolerances.
vocis_unit_test(test_precision ${VOCIS_TEST_SRC}/unit/test_precision.c)
vocis_unit_test(test_q8 ${VOCIS_TEST_SRC}/unit/test_q8.c)
# The speculative draft's linears: q4 and q8d (x in one part), vx_draft_quantize.
vocis_unit_test(test_q4 ${VOCIS_TEST_SRC}/unit/test_q4.c)
vocis_script_test(golden_precision_bf16 golden/precision_bf16.sh)
vocis_script_test(golden_precision_q8 golden/precision_q8.sh)
