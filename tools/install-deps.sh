#!/usr/bin/env bash
# Installs the Debian 12 packages vocis builds with (see README: Dependencies).
set -euo pipefail
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
    build-essential cmake pkg-config \
    libopenblas-dev libcjson-dev libsndfile1-dev libsoxr-dev \
    libpcre2-dev libutf8proc-dev libfftw3-dev libmicrohttpd-dev time \
    python3 python3-numpy >/dev/null  # python3-numpy: tests of the Python binding (bindings/python)
