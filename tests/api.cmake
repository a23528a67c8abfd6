# The family tables behind the public API (issue 23 item 1): each tiny folder is told
# apart as its family, and what a family lacks is refused with an error.
vocis_unit_test(test_families ${VOCIS_TEST_SRC}/unit/test_families.c)
