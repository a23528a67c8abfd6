# Packaging of libvocis (included from the top-level CMakeLists.txt after the
# library targets exist): symbol visibility, the versioned shared library,
# and the install rules for bin/, lib/ (shared + static, pkg-config, CMake
# package), include/ and the Python binding.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# Only the declarations of include/vocis.h are visible (it wraps itself in
# "#pragma GCC visibility push(default)"), and the version script keeps
# exactly vocis_* in the dynamic symbol table, so a new public function is
# exported without any annotation.
set_target_properties(vocis_obj PROPERTIES C_VISIBILITY_PRESET hidden)
set(VOCIS_VERSION_SCRIPT ${PROJECT_SOURCE_DIR}/cmake/vocis.map)
# 0.x: every minor release may change the ABI (struct layouts), so the SONAME
# carries MAJOR.MINOR (libvocis.so.0.3); from 1.0 on it is MAJOR.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(VOCIS_SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
  set(VOCIS_PKG_COMPAT SameMinorVersion)
else()
  set(VOCIS_SOVERSION ${PROJECT_VERSION_MAJOR})
  set(VOCIS_PKG_COMPAT SameMajorVersion)
endif()
set_target_properties(vocis_shared PROPERTIES
  VERSION ${PROJECT_VERSION} SOVERSION ${VOCIS_SOVERSION} EXPORT_NAME vocis
  LINK_DEPENDS ${VOCIS_VERSION_SCRIPT})
target_link_options(vocis_shared PRIVATE "LINKER:--version-script=${VOCIS_VERSION_SCRIPT}" "LINKER:--no-undefined")
add_library(vocis::vocis ALIAS vocis_shared)

# ---- install ---------------------------------------------------------------
install(TARGETS vocis RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS vocis_shared EXPORT vocisTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS vocis_static ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${PROJECT_SOURCE_DIR}/include/vocis.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

# pkg-config: relocatable (prefix found from the .pc file's own folder), so
# `cmake --install build --prefix P` works for any P. Linking libvocis.a
# (pkg-config --static) adds the dependencies' own (shared) libraries, as
# pkg-config gave them to this build: Debian's dev packages do not carry the
# static closure of e.g. libsndfile, and `pkg-config --cflags vocis` stays
# free of the dependencies' include paths.
file(RELATIVE_PATH VOCIS_PC_PREFIX_REL /_p/${CMAKE_INSTALL_LIBDIR}/pkgconfig /_p)
string(REGEX REPLACE "/$" "" VOCIS_PC_PREFIX_REL "${VOCIS_PC_PREFIX_REL}")
set(VOCIS_PC_LIBS_PRIVATE "")
foreach(flag ${DEPS_LDFLAGS})
  string(APPEND VOCIS_PC_LIBS_PRIVATE " ${flag}")
endforeach()
foreach(lib m)
  string(APPEND VOCIS_PC_LIBS_PRIVATE " -l${lib}")
endforeach()
string(STRIP "${VOCIS_PC_LIBS_PRIVATE}" VOCIS_PC_LIBS_PRIVATE)
configure_file(${PROJECT_SOURCE_DIR}/cmake/vocis.pc.in ${PROJECT_BINARY_DIR}/vocis.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/vocis.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# CMake package: find_package(vocis 0.3) -> vocis::vocis
set(VOCIS_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/vocis)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/vocisConfig.cmake.in
  ${PROJECT_BINARY_DIR}/vocisConfig.cmake INSTALL_DESTINATION ${VOCIS_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/vocisConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY ${VOCIS_PKG_COMPAT})
install(EXPORT vocisTargets NAMESPACE vocis:: DESTINATION ${VOCIS_CMAKE_DIR})
install(FILES ${PROJECT_BINARY_DIR}/vocisConfig.cmake ${PROJECT_BINARY_DIR}/vocisConfigVersion.cmake
        DESTINATION ${VOCIS_CMAKE_DIR})

# Python binding (pure ctypes): installed where Debian's python3 looks
# (/usr/lib/python3/dist-packages, /usr/local/lib/python3.X/dist-packages),
# with _install.py telling it where the installed libvocis is.
find_program(VOCIS_PYTHON3 NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
find_program(VOCIS_PYTHON3 NAMES python3)
set(_vocis_pyver "")
if(VOCIS_PYTHON3)
  execute_process(COMMAND ${VOCIS_PYTHON3} -c "import sys; print('%d.%d' % sys.version_info[:2])"
                  OUTPUT_VARIABLE _vocis_pyver OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
endif()
if(CMAKE_INSTALL_PREFIX STREQUAL "/usr" OR NOT _vocis_pyver)
  set(_vocis_pydir lib/python3/dist-packages)
else()
  set(_vocis_pydir lib/python${_vocis_pyver}/dist-packages)
endif()
set(VOCIS_PYTHON_INSTALL_DIR ${_vocis_pydir} CACHE STRING
    "where `cmake --install` puts the Python package vocis (relative to the prefix)")
file(RELATIVE_PATH _vocis_py_to_lib /_p/${VOCIS_PYTHON_INSTALL_DIR}/vocis /_p/${CMAKE_INSTALL_LIBDIR})
file(WRITE ${PROJECT_BINARY_DIR}/python/_install.py
     "# written by cmake --install: where the installed libvocis is, relative to this package\n"
     "LIBDIR = \"${_vocis_py_to_lib}\"\n"
     "SONAME = \"libvocis.so.${VOCIS_SOVERSION}\"\n")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/bindings/python/vocis DESTINATION ${VOCIS_PYTHON_INSTALL_DIR}
        PATTERN __pycache__ EXCLUDE)
install(FILES ${PROJECT_BINARY_DIR}/python/_install.py DESTINATION ${VOCIS_PYTHON_INSTALL_DIR}/vocis)
