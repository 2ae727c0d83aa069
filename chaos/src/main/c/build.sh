#!/usr/bin/env bash
# Builds cairn-lossyfs, the FUSE layer under the chaos runs' data directories (called by the chaos Maven build):
#   build.sh OUT_DIR
# Without a C compiler or libfuse3's headers (Debian: libfuse3-dev) it is skipped with a notice: the chaos
# scenarios that need it (power loss, disk stalls) then say so and are skipped.
set -u
out="$1"
src="$(cd "$(dirname "$0")" && pwd)"
cc="${CC:-gcc}"
mkdir -p "$out"
if ! command -v "$cc" >/dev/null 2>&1; then
    echo "[cairn-native] no C compiler ($cc): cairn-lossyfs skipped"
    exit 0
fi
if [ ! -f /usr/include/fuse3/fuse.h ]; then
    echo "[cairn-native] /usr/include/fuse3/fuse.h not found: cairn-lossyfs skipped (apt-get install libfuse3-dev)"
    exit 0
fi
if ! "$cc" -O2 -Wall -Wextra -D_FILE_OFFSET_BITS=64 -I/usr/include/fuse3 -o "$out/cairn-lossyfs" "$src/lossyfs.c" -lfuse3 -lpthread; then
    echo "[cairn-native] compiling cairn-lossyfs failed: skipped"
    rm -f "$out/cairn-lossyfs"
fi
exit 0
