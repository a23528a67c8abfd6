#!/usr/bin/env bash
# Installs the Debian 12 packages vocis builds with (see README: Dependencies).
# --tests also installs what only the test suite uses: curl (the server tests),
# Debian's chromium (the web page test drives it headless), nginx-light (the
# scale-out recipe), clang + libclang-rt-dev (the fuzz targets: libFuzzer and
# the sanitizer runtimes, which clang only recommends) and, where no node is
# installed yet, Debian's nodejs + npm (the official openai client and
# puppeteer-core; an existing node is kept).
set -euo pipefail
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
EXTRA=()
if [ "${1:-}" = "--tests" ]; then
    EXTRA=(curl chromium nginx-light clang libclang-rt-dev)
    command -v node >/dev/null && command -v npm >/dev/null || EXTRA+=(nodejs npm)
fi
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
    build-essential cmake pkg-config \
    libopenblas-dev libcjson-dev libsndfile1-dev libsoxr-dev \
    libpcre2-dev libutf8proc-dev libfftw3-dev libmicrohttpd-dev time \
    python3 python3-numpy "${EXTRA[@]}" >/dev/null  # python3-numpy: tests of the Python binding
