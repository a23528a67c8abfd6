add_executable(stcompare ${VOCIS_TEST_SRC}/tools/stcompare.c)
target_link_libraries(stcompare PRIVATE vocis_static)
