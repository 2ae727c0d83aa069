#!/usr/bin/env bash
# Shows the Env build check failing: copies the tracked tree to a scratch directory, plants a
# System.currentTimeMillis() call in a master class, and builds the master module. The build must fail
# with forbiddenapis naming the call; this script exits 0 only if it does.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
(cd "$here" && git ls-files -z | xargs -0 cp --parents -t "$tmp")
cat > "$tmp/master/src/main/java/dev/cairn/master/PlantedClock.java" <<'JAVA'
package dev.cairn.master;

final class PlantedClock {
    static long now() { return System.currentTimeMillis(); }
}
JAVA
if mvn -B -q -ntp -f "$tmp/pom.xml" -pl master -am -DskipTests process-classes > "$tmp/build.log" 2>&1; then
    echo "UNEXPECTED: the build accepted a planted System.currentTimeMillis()" >&2
    exit 1
fi
grep -E "Forbidden method invocation|PlantedClock" "$tmp/build.log" | head -3
echo "OK: the build refuses node code that reads the system clock"
