#!/bin/sh
# Cairn's NFS client suite, run inside ../shared/tools/nfs-vm's guest (busybox sh) by NfsKernelClientTest.
#   guest-suite.sh DIR DATA_MIB NFILES [EXPECTED_VERS [CHUNKY [HOLEY]]]
# CHUNKY: a file (relative to the mount) the host created with small chunks, for the random overwrites.
# HOLEY: another, empty, for a file with holes copied by GNU cp (its SEEK_DATA/SEEK_HOLE go over NFS as SEEK in 4.2).
# Prints "ok NAME" / "not ok NAME", and "host NAME ARGS" lines the test checks through the cluster's own
# client library. Exits with the number of failed checks.
DIR=$1; MIB=${2:-8}; NFILES=${3:-1000}; CHUNKY=$5; HOLEY=$6
failed=0
ok() { echo "ok $1"; }
bad() { echo "not ok $1"; failed=$((failed + 1)); }
t() { name=$1; shift; if "$@" 2>/dev/null; then ok "$name"; else bad "$name"; fi; }
fails() { ! "$@" 2>/dev/null; }

cd "$NFS_MNT" || exit 99
rm -rf "$DIR"; mkdir "$DIR" && cd "$DIR" || exit 98
vers=$(grep " $NFS_MNT " /proc/mounts | tr ',' '\n' | grep '^vers=')
echo "# $vers"
[ -z "$4" ] || t "mounted as $4" [ "$vers" = "vers=$4" ]

# data: written with fsync, read back after the page cache is dropped; the host reads it through the cluster
dd if=/dev/urandom of=/tmp/data bs=1M count="$MIB" 2>/dev/null
sum=$(md5sum < /tmp/data | cut -d' ' -f1)
t "write $MIB MiB with fsync" dd if=/tmp/data of=data.bin bs=1M conv=fsync
sync; echo 3 > /proc/sys/vm/drop_caches
t "read back $MIB MiB" [ "$(md5sum < data.bin | cut -d' ' -f1)" = "$sum" ]
echo "host md5 $DIR/data.bin $sum"
# overwrite in the middle, unaligned, then read again
printf 'CAIRN' | dd of=data.bin bs=1 seek=1000003 conv=notrunc,fsync 2>/dev/null
dd if=data.bin of=/tmp/data2 bs=1M 2>/dev/null
printf 'CAIRN' | dd of=/tmp/data bs=1 seek=1000003 conv=notrunc 2>/dev/null
sum2=$(md5sum < /tmp/data | cut -d' ' -f1)
sync; echo 3 > /proc/sys/vm/drop_caches
t "overwrite in place" [ "$(md5sum < data.bin | cut -d' ' -f1)" = "$sum2" ]
echo "host md5 $DIR/data.bin $sum2"
rm -f /tmp/data /tmp/data2

# random overwrites over a file of many chunks (the host made $CHUNKY with 1 MiB chunks): 4 KiB writes at
# random offsets, with an fsync now and then, mirrored locally; the checksums must agree after the page cache
# is dropped, and on the host through the cluster
if [ -n "$CHUNKY" ]; then
  dd if=/dev/urandom of=/tmp/mirror bs=1M count=12 2>/dev/null
  t "fill a file of 12 chunks" dd if=/tmp/mirror of="$NFS_MNT/$CHUNKY" bs=1M conv=notrunc,fsync
  n=0; okw=0
  for off in $(awk 'BEGIN { srand(25); for (i = 0; i < 300; i++) print int(rand() * 3072) }'); do
    dd if=/dev/urandom of=/tmp/blk bs=4096 count=1 2>/dev/null
    dd if=/tmp/blk of=/tmp/mirror bs=4096 seek="$off" conv=notrunc 2>/dev/null
    n=$((n + 1))
    if [ $((n % 50)) -eq 0 ]; then conv=notrunc,fsync; else conv=notrunc; fi
    dd if=/tmp/blk of="$NFS_MNT/$CHUNKY" bs=4096 seek="$off" conv=$conv 2>/dev/null && okw=$((okw + 1))
  done
  t "300 random 4 KiB overwrites over 12 chunks" [ "$okw" -eq 300 ]
  t "fsync after them" dd if=/dev/null of="$NFS_MNT/$CHUNKY" conv=notrunc,fsync
  msum=$(md5sum < /tmp/mirror | cut -d' ' -f1)
  sync; echo 3 > /proc/sys/vm/drop_caches
  t "random overwrites read back" [ "$(md5sum < "$NFS_MNT/$CHUNKY" | cut -d' ' -f1)" = "$msum" ]
  echo "host md5 $CHUNKY $msum"
  rm -f /tmp/mirror /tmp/blk
fi

# a file with holes (1 MiB chunks: data in chunks 0 and 2, holes in 1 and at the end), copied with GNU cp
# --sparse=always, which looks for data with lseek(SEEK_DATA/SEEK_HOLE): the kernel sends SEEK in 4.2. A hole reported
# where data is would leave zeros in the copy; mirrored locally, the checksums must agree
if [ -n "$HOLEY" ] && [ -x /usr/bin/cp ]; then
  dd if=/dev/urandom of=/tmp/hblk bs=1M count=1 2>/dev/null
  dd if=/tmp/hblk of=/tmp/hmirror bs=1M seek=0 conv=notrunc 2>/dev/null
  dd if=/tmp/hblk of=/tmp/hmirror bs=1M seek=2 conv=notrunc 2>/dev/null
  truncate -s 4194304 /tmp/hmirror
  t "write chunks 0 and 2 of a file with holes" sh -c "dd if=/tmp/hblk of='$NFS_MNT/$HOLEY' bs=1M seek=0 conv=notrunc,fsync && dd if=/tmp/hblk of='$NFS_MNT/$HOLEY' bs=1M seek=2 conv=notrunc,fsync && truncate -s 4194304 '$NFS_MNT/$HOLEY'"
  t "cp --sparse=always of it" /usr/bin/cp --sparse=always "$NFS_MNT/$HOLEY" /tmp/hcopy
  hsum=$(md5sum < /tmp/hmirror | cut -d' ' -f1)
  t "the sparse copy holds the file's bytes" [ "$(md5sum < /tmp/hcopy | cut -d' ' -f1)" = "$hsum" ]
  # a plain read of it, from the server: 4.2 clients read holes with READ_PLUS, which answers a hole as its extent
  sync; echo 3 > /proc/sys/vm/drop_caches
  t "a plain read of the file with holes" [ "$(md5sum < "$NFS_MNT/$HOLEY" | cut -d' ' -f1)" = "$hsum" ]
  echo "# READ_PLUS calls on this mount: $(awk '$1 == "READ_PLUS:" { print $2; exit }' /proc/self/mountstats)"
  # a hole punched across the boundary of chunks 0 and 1 and into chunk 2 (4.2: DEALLOCATE; before it the client
  # has no way to ask and fallocate fails): the range reads as zeros, the size stays
  if [ "$vers" = "vers=4.2" ] && [ -x /usr/bin/fallocate ]; then
    dd if=/dev/zero of=/tmp/hmirror bs=4096 seek=255 count=258 conv=notrunc 2>/dev/null
    hsum=$(md5sum < /tmp/hmirror | cut -d' ' -f1)
    t "fallocate --punch-hole over two chunk boundaries" /usr/bin/fallocate --punch-hole --offset 1044480 --length 1056768 "$NFS_MNT/$HOLEY"
    sync; echo 3 > /proc/sys/vm/drop_caches
    t "the punched range reads as zeros, the rest as it was" [ "$(md5sum < "$NFS_MNT/$HOLEY" | cut -d' ' -f1)" = "$hsum" ]
    t "punching keeps the size" [ "$(stat -c %s "$NFS_MNT/$HOLEY")" = 4194304 ]
    echo "# DEALLOCATE calls on this mount: $(awk '$1 == "DEALLOCATE:" { print $2; exit }' /proc/self/mountstats)"
  fi
  echo "host md5 $HOLEY $hsum"
  rm -f /tmp/hblk /tmp/hmirror /tmp/hcopy
fi

# extended attributes (4.2: the kernel maps user.* onto RFC 8276's GETXATTR, SETXATTR, LISTXATTRS and REMOVEXATTR),
# with attr's setfattr/getfattr (copied in from the host); the host reads the value back through the cluster's client
if [ "$vers" = "vers=4.2" ] && [ -x /usr/bin/setfattr ] && [ -x /usr/bin/getfattr ]; then
  echo x > tagged
  t "setfattr user.color" /usr/bin/setfattr -n user.color -v blue tagged
  t "getfattr reads it back" [ "$(/usr/bin/getfattr --only-values -n user.color tagged)" = "blue" ]
  t "setfattr of a binary value" /usr/bin/setfattr -n user.bin -v 0x00ff10 tagged
  t "getfattr -d lists both" sh -c "/usr/bin/getfattr -d tagged | grep -q '^user.color=\"blue\"' && /usr/bin/getfattr -d -e hex tagged | grep -q '^user.bin=0x00ff10'"
  t "setfattr -x removes one" /usr/bin/setfattr -x user.bin tagged
  t "a removed attribute is gone" fails /usr/bin/getfattr -n user.bin tagged
  sync; echo 3 > /proc/sys/vm/drop_caches
  t "the other is still set" [ "$(/usr/bin/getfattr --only-values -n user.color tagged)" = "blue" ]
  mkdir xdir
  t "a directory takes one too" /usr/bin/setfattr -n user.d -v 1 xdir
  t "and lists it" sh -c "/usr/bin/getfattr -d xdir | grep -q '^user.d=\"1\"'"
  # the kernel sends a user.* name without its prefix (and adds it back when listing): the master holds "color"
  echo "host xattr $DIR/tagged color blue"
  echo "host noxattr $DIR/tagged bin"
fi

# many files
mkdir many
i=0; while [ $i -lt "$NFILES" ]; do echo "$i" > many/f$i; i=$((i + 1)); done
t "create $NFILES files" [ "$(ls many | wc -l)" -eq "$NFILES" ]
t "read $NFILES files" [ "$(cat many/* | awk '{ s += $1 } END { print s }')" -eq $((NFILES * (NFILES - 1) / 2)) ]
t "ls -l $NFILES files" [ "$(ls -l many | grep -c ' f[0-9]*$')" -eq "$NFILES" ]
rm -f many/*
t "remove $NFILES files" [ -z "$(ls -A many)" ]
t "rmdir" rmdir many

# rename
echo one > a; echo two > b
t "rename over an existing file" mv a b
t "rename over: content" [ "$(cat b)" = one -a ! -e a ]
mkdir x y; echo moved > x/m
t "rename across directories" mv x/m y/n
t "rename across: result" [ ! -e x/m -a "$(cat y/n)" = moved ]
t "rename a directory" mv y z
t "rename a directory: child" [ "$(cat z/n)" = moved ]
t "directory into itself refused" fails mv z z/inner
echo "host content $DIR/b one"
echo "host absent $DIR/a"

# mkdir / rmdir
t "mkdir -p" mkdir -p p/q/r
t "rmdir of a non-empty directory refused" fails rmdir p
t "rmdir nested" rmdir p/q/r p/q p
t "mkdir over an existing name refused" fails mkdir z

# links
echo target > tgt
t "symlink" ln -s tgt sl
t "readlink" [ "$(readlink sl)" = tgt ]
t "read through a symlink" [ "$(cat sl)" = target ]
t "hard link" ln tgt hl
t "link count 2" [ "$(stat -c %h tgt)" -eq 2 ]
t "same inode" [ "$(stat -c %i tgt)" = "$(stat -c %i hl)" ]
rm tgt
t "last name keeps the data" [ "$(cat hl)" = target -a "$(stat -c %h hl)" -eq 1 ]
echo "host symlink $DIR/sl tgt"

# special files: a name, attributes and (for a device) its number; no data
t "mkfifo" mkfifo fifo
t "a fifo" [ -p fifo ]
t "mknod c 1 3" mknod cdev c 1 3
t "a character device 1:3" [ -c cdev -a "$(stat -c %t:%T cdev)" = 1:3 ]
t "mknod b 7 2" mknod bdev b 7 2
t "a block device 7:2" [ -b bdev -a "$(stat -c %t:%T bdev)" = 7:2 ]
t "chmod a fifo" chmod 600 fifo
t "fifo mode 600" [ "$(stat -c %a fifo)" = 600 ]
t "rename a device" mv bdev bdev2
echo "host type $DIR/fifo FIFO"
echo "host type $DIR/cdev CHAR_DEVICE 1:3"
echo "host type $DIR/bdev2 BLOCK_DEVICE 7:2"

# attributes
echo data > perm
t "chmod 640" chmod 640 perm
t "mode 640" [ "$(stat -c %a perm)" = 640 ]
t "chown 1234:5678" chown 1234:5678 perm
t "owner 1234:5678" [ "$(stat -c %u:%g perm)" = 1234:5678 ]
echo "host mode $DIR/perm 640"
echo "host owner $DIR/perm 1234:5678"
printf '#!/bin/sh\necho ran\n' > run.sh; chmod 755 run.sh
t "execute a script" [ "$(./run.sh)" = ran ]
t "touch -d sets mtime" touch -d '2001-02-03 04:05:06' perm
t "mtime kept" [ "$(stat -c %Y perm)" -eq 981173106 ]

# size changes
printf 'line1\n' > app; printf 'line2\n' >> app
t "append" [ "$(cat app | wc -l)" -eq 2 ]
t "truncate shorter" truncate -s 3 app
t "size 3" [ "$(stat -c %s app)" -eq 3 ]
t "truncate longer" truncate -s 10 app
t "grown part reads as zeros" [ "$(od -An -tx1 app | tr -d ' \n')" = "6c696e00000000000000" ]
echo "host size $DIR/app 10"
t "sparse write at 200 MiB" dd if=/dev/zero of=sparse bs=1 count=1 seek=209715200
t "sparse size" [ "$(stat -c %s sparse)" -eq 209715201 ]
t "hole reads as zeros" [ "$(dd if=sparse bs=4096 skip=1000 count=1 2>/dev/null | od -An -tx1 | tr -d ' *\n' | tr -d 0)" = "" ]
rm -f sparse

# byte-range locks: the client turns flock(2) into NFSv4 LOCK/LOCKU on the whole file (flock(1) from the host)
echo data > locked
t "flock(1) is here" command -v flock
t "exclusive lock" flock -x locked true
flock -x locked sleep 4 &
holder=$!
sleep 2
t "a held exclusive lock refuses another" fails flock -n -x locked true
t "and a shared one" fails flock -n -s locked true
wait $holder
t "released when its holder ends" flock -n -x locked true
flock -s locked sleep 4 &
holder=$!
sleep 2
t "shared locks share" flock -n -s locked true
t "a shared lock refuses an exclusive one" fails flock -n -x locked true
wait $holder
rm -f locked

echo "# $failed failed"
exit $failed
