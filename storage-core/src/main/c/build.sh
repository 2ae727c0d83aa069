#!/usr/bin/env bash
# Builds Cairn's JNI erasure-coding glue (called by the storage-core Maven build):
#   build.sh OUT_DIR JAVA_HOME
# One shared library per native engine, so each loads (or not) on its own. A missing compiler or missing
# library headers skip that engine with a notice: Cairn then falls back to the pure-Java engine.
set -u
out="$1"
java_home="$2"
src="$(cd "$(dirname "$0")" && pwd)"
cc="${CC:-gcc}"
mkdir -p "$out"
if ! command -v "$cc" >/dev/null 2>&1; then
    echo "[cairn-native] no C compiler ($cc): native erasure-coding engines skipped"
    exit 0
fi
jni=(-I"$java_home/include" -I"$java_home/include/linux")
flags=(-O3 -fPIC -shared -Wall -Wextra -Wno-unused-parameter)
build() { # name header libs...
    local name="$1" header="$2"
    shift 2
    if [ ! -f "$header" ]; then
        echo "[cairn-native] $header not found: the $name engine is skipped (apt-get install libisal-dev libjerasure-dev libgf-complete-dev)"
        return 0
    fi
    if ! "$cc" "${flags[@]}" "${jni[@]}" -I/usr/include/jerasure -o "$out/libcairn_$name.so" "$src/cairn_$name.c" "$@"; then
        echo "[cairn-native] compiling the $name engine failed: skipped"
        rm -f "$out/libcairn_$name.so"
    fi
}
build isal /usr/include/isa-l/erasure_code.h -lisal
build jerasure /usr/include/jerasure.h -lJerasure -lgf_complete
exit 0
