#!/bin/sh
# The kernel-client scenario's guest (busybox sh in ../shared/tools/nfs-vm), run by ChaosRun while the NFS gateway
# it writes through is killed and restarted:
#   kernel-writer.sh DIR SECONDS SOURCES
# Three writers at once copy /opt/chaos-src/f0..f(SOURCES-1) in turn to $NFS_MNT/DIR/k0, k1, ... (writer w makes
# kw, k(w+3), ...) for SECONDS; then the page cache is dropped and every copy read back through the mount. Writer 0
# copies with dd conv=fsync. Writers 1 and 2 write a copy without a sync, leave it for a few seconds (the kernel's
# writeback, set to run within a second, sends it as UNSTABLE WRITEs meanwhile) and only then fsync it: a gateway
# restart between those WRITEs and the COMMIT is what the write verifier exists for (RFC 8881 §18.32.3), and with
# two such writers one is usually in that window when the gateway dies.
# Prints, one line each (nfs-vm hands the console over when the VM ends, so U, the guest's uptime in seconds,
# says when):
#   start kI fX U            copy I of source X begins
#   acked kI fX U            its fsync returned 0: the file's bytes are stable on the server
#   failed kI fX U REASON    dd failed (a hard mount retries for ever, so this should not happen)
#   readback kI ok|differs   the copy read back through the mount after the page cache was dropped
#   done N                   N copies acknowledged
DIR=$1; SECONDS_=$2; SOURCES=$3
WRITERS=3
up() { cut -d' ' -f1 /proc/uptime; }
echo 100 > /proc/sys/vm/dirty_expire_centisecs
echo 50 > /proc/sys/vm/dirty_writeback_centisecs
mkdir -p "$NFS_MNT/$DIR" || { echo "failed mkdir $NFS_MNT/$DIR"; exit 97; }
end=$(( $(date +%s) + SECONDS_ ))

writer() {
    w=$1; i=$w; : > "/tmp/acked.$w"
    while [ "$(date +%s)" -lt "$end" ]; do
        x=$(( i % SOURCES ))
        f="$NFS_MNT/$DIR/k$i"
        echo "start k$i f$x $(up)"
        if [ "$w" = 0 ]; then
            dd if="/opt/chaos-src/f$x" of="$f" bs=65536 conv=fsync 2>"/tmp/dd.$w"
        else
            dd if="/opt/chaos-src/f$x" of="$f" bs=65536 2>"/tmp/dd.$w" && sleep $(( 1 + w )) \
                && dd if=/dev/null of="$f" conv=notrunc,fsync 2>>"/tmp/dd.$w"
        fi
        if [ $? = 0 ]; then
            echo "acked k$i f$x $(up)"
            echo "$i $x" >> "/tmp/acked.$w"
        else
            echo "failed k$i f$x $(up) $(tail -n 1 "/tmp/dd.$w")"
        fi
        i=$((i + WRITERS))
    done
}

w=0
while [ $w -lt $WRITERS ]; do writer $w & w=$((w + 1)); done
wait
sync; echo 3 > /proc/sys/vm/drop_caches
n=0
cat /tmp/acked.* > /tmp/acked
while read -r k x; do
    want=$(md5sum < "/opt/chaos-src/f$x" | cut -d' ' -f1)
    got=$(md5sum < "$NFS_MNT/$DIR/k$k" | cut -d' ' -f1)
    if [ "$got" = "$want" ]; then echo "readback k$k ok"; else echo "readback k$k differs"; fi
    n=$((n + 1))
done < /tmp/acked
echo "done $n"
