/*
 * cairn-lossyfs: a FUSE pass-through filesystem that can lose power.
 *
 *   cairn-lossyfs BACKING_DIR MOUNT_POINT [strict|journaled]
 *
 * Every call goes through to BACKING_DIR at once, but what it changed is remembered until the change is durable the
 * way POSIX says, strictly: a file's data and size once the file is fsynced (or fdatasynced), a name (created,
 * removed, renamed, linked) once its directory is fsynced -- both directories, for a rename. The command `crash`
 * then undoes, newest first, every change not yet durable, leaving BACKING_DIR as a disk would hold it after its
 * host lost power: unsynced writes and truncations gone, unsynced new names gone, unsynced removals back. This is
 * stricter than ext4 in ordered mode (which usually persists a new file's name with its data), which is the point:
 * software that relies on more than POSIX promises is caught here, as with LazyFS and ALICE.
 *
 * `journaled` models a journaling filesystem's metadata instead (ext4 with its journal, XFS): names change in one
 * ordered log that any fsync or directory fsync commits whole, so every name change made before a sync is durable
 * after it, whichever file or directory was synced. Data stays as strict as before (only the synced file's).
 * Software written for Linux often relies on this (a new file's name made durable by the file's own fsync).
 *
 * How undo works: a write or truncation saves the bytes it overwrote (within the old size) and the old size, with a
 * descriptor of the file kept open until the record goes, so undo reaches the file whatever it is called by then. A
 * removed file is renamed into a stash directory inside BACKING_DIR instead of being unlinked (its undo renames it
 * back; it is unlinked for real once the removal is durable); a removed directory is empty, so its undo makes it again.
 * A new name's undo moves what it names into the stash. Undoing newest first makes each undo meet the state its
 * change left.
 *
 * Commands, one per line on standard input, each answered with one line on standard output:
 *   crash        undo every change not yet durable (the process using the filesystem must be dead: killed first)
 *   crash torn SEED  the same, except that each unsynced write, drawn from SEED, may have reached the disk whole (one
 *                in four), or only a prefix of whole 512-byte sectors of it (one in four, possibly none), the rest of it
 *                and the file's size as before it: what a disk that wrote some of its cache before the power went
 *                leaves. Names and truncations are undone as ever.
 *   stall MS     delay every read, write and sync by MS milliseconds (0: no delay): a slow or stalled disk
 *   fail on|off  answer every read, write, sync and name change with EIO (a dying disk) until `fail off`
 *   stats        the changes not yet durable and the bytes their undo holds
 *   quit         unmount and exit (so does the end of standard input)
 */
#define FUSE_USE_VERSION 31
#define _GNU_SOURCE
#include <fuse.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

/* The stash, a directory of BACKING_DIR hidden from listings: removed names wait there until the removal is durable. */
#define STASH ".cairn-lossyfs-stash"
/* Above this many bytes of saved overwritten data a warning is printed once (memory is the only bound). */
#define WARN_UNDO_BYTES (512L << 20)
#define MAX_LINE 256

/* A file or directory that records refer to, held open so undo reaches it under whatever name it has by then. */
typedef struct node {
    ino_t ino;
    dev_t dev;
    int fd;
    int refs;
    /* during a torn crash: the byte ranges [kept[2i], kept[2i+1]) of writes it kept, which undoing older changes spares */
    off_t *kept;
    int nkept, capkept;
    off_t kept_end;
    struct node *next;
} node;

enum kind { R_DATA, R_NEW_NAME, R_REMOVED_NAME, R_RENAME };

typedef struct rec {
    enum kind kind;
    /* R_DATA: the file, the old size, and the bytes [off, off + len) held before the change (within the old size) */
    node *file;
    off_t off, old_size;
    size_t len;
    char *old;
    /* a write's own length (0 for a truncation or an allocation) */
    size_t wlen;
    /* names: dir1/name1 (the name made or removed; a rename's source) and dir2/name2 (a rename's target) */
    node *dir1, *dir2;
    char *name1, *name2;
    int synced1, synced2;
    /* what a removal or a rename over an existing name displaced: its stash name, or for a directory its mode */
    char *stashed;
    int removed_dir;
    mode_t removed_mode;
    struct rec *prev, *next;
} rec;

static int rootfd = -1, stashfd = -1;
static char *mount_point;
static struct fuse *fs;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static rec *head, *tail;
static node *nodes;
static long pending, undo_bytes, stash_seq;
static volatile int stall_ms, failing;
static int warned;
/* names are committed by any sync (a journaling filesystem's metadata), not only their directory's */
static int journaled;

static void say(const char *fmt, ...) {
    va_list a;
    va_start(a, fmt);
    vfprintf(stdout, fmt, a);
    va_end(a);
    fputc('\n', stdout);
    fflush(stdout);
}

/* Delays a data call on a stalled disk; says whether a failing disk refuses it (with EIO). */
static int stall(void) {
    int ms = stall_ms;
    if (ms > 0) {
        struct timespec t = {ms / 1000, (long) (ms % 1000) * 1000000L};
        nanosleep(&t, NULL);
    }
    return failing;
}

static const char *rel(const char *path) { return path[1] ? path + 1 : "."; }

/* The parent of `path` opened as a directory, and its last component in `name`. */
static int parent_of(const char *path, char *name) {
    const char *slash = strrchr(path, '/');
    snprintf(name, NAME_MAX + 1, "%s", slash + 1);
    if (slash == path) return openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%.*s", (int) (slash - path - 1), path + 1);
    return openat(rootfd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/* The node for the object `fd` refers to, taking a reference; `fd` is consumed (kept, or closed if known). */
static node *node_of(int fd) {
    struct stat st;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return NULL;
    }
    for (node *n = nodes; n; n = n->next) {
        if (n->ino == st.st_ino && n->dev == st.st_dev) {
            n->refs++;
            close(fd);
            return n;
        }
    }
    node *n = calloc(1, sizeof *n);
    n->ino = st.st_ino;
    n->dev = st.st_dev;
    n->fd = fd;
    n->refs = 1;
    n->next = nodes;
    nodes = n;
    return n;
}

static void unref(node *n) {
    if (!n || --n->refs > 0) return;
    for (node **p = &nodes; *p; p = &(*p)->next) {
        if (*p == n) {
            *p = n->next;
            break;
        }
    }
    close(n->fd);
    free(n->kept);
    free(n);
}

static rec *append(enum kind k) {
    rec *r = calloc(1, sizeof *r);
    r->kind = k;
    r->prev = tail;
    if (tail) tail->next = r;
    else head = r;
    tail = r;
    pending++;
    return r;
}

static void drop(rec *r, int durable) {
    if (r->prev) r->prev->next = r->next;
    else head = r->next;
    if (r->next) r->next->prev = r->prev;
    else tail = r->prev;
    if (durable && r->stashed) unlinkat(stashfd, r->stashed, 0); /* the removal is durable: the bytes may go */
    undo_bytes -= (long) r->len;
    unref(r->file);
    unref(r->dir1);
    unref(r->dir2);
    free(r->old);
    free(r->name1);
    free(r->name2);
    free(r->stashed);
    free(r);
    pending--;
}

static char *stash_name(void) {
    char *s = malloc(32);
    snprintf(s, 32, "%ld", ++stash_seq);
    return s;
}

/* The file behind `fd` opened again for reading and writing (`fd` may be write-only; undo needs both). */
static int reopen(int fd) {
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    return open(proc, O_RDWR | O_CLOEXEC);
}

/* Remembers the bytes of [off, off + len) and the size of the file behind `fd` before it changes. */
static int save_data(int fd, off_t off, size_t len) {
    struct stat st;
    if (fstat(fd, &st) != 0) return -errno;
    node *file = NULL;
    for (node *n = nodes; n && !file; n = n->next) {
        if (n->ino == st.st_ino && n->dev == st.st_dev) file = n;
    }
    if (file) {
        file->refs++;
    } else {
        int rw = reopen(fd);
        if (rw < 0) return -errno;
        file = node_of(rw);
        if (!file) return -EIO;
    }
    rec *r = append(R_DATA);
    r->file = file;
    r->old_size = st.st_size;
    r->off = off;
    r->len = off >= st.st_size ? 0 : (size_t) ((off_t) len < st.st_size - off ? (off_t) len : st.st_size - off);
    if (r->len > 0) {
        r->old = malloc(r->len);
        ssize_t got = pread(file->fd, r->old, r->len, off);
        if (got < 0) got = 0;
        r->len = (size_t) got;
    }
    undo_bytes += (long) r->len;
    if (undo_bytes > WARN_UNDO_BYTES && !warned) {
        warned = 1;
        fprintf(stderr, "cairn-lossyfs: over %ld MiB of unsynced overwrites held for undo\n", WARN_UNDO_BYTES >> 20);
    }
    return 0;
}

/* A new name dir/name (made by create, mkdir, link, symlink, mknod): undone by moving it to the stash. */
static void new_name(int dirfd, const char *name) {
    rec *r = append(R_NEW_NAME);
    r->dir1 = node_of(dup(dirfd));
    r->name1 = strdup(name);
}

/*
 * Takes dir/name out of the namespace so that its removal can be undone: a file goes to the stash, a directory
 * (empty: the caller checked) is removed and its mode kept. Fills r's stashed/removed_dir/removed_mode.
 */
static int take_out(int dirfd, const char *name, rec *r) {
    struct stat st;
    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return -errno;
    if (S_ISDIR(st.st_mode)) {
        if (unlinkat(dirfd, name, AT_REMOVEDIR) != 0) return -errno;
        r->removed_dir = 1;
        r->removed_mode = st.st_mode & 07777;
        return 0;
    }
    char *s = stash_name();
    if (renameat(dirfd, name, stashfd, s) != 0) {
        int e = errno;
        free(s);
        return -e;
    }
    r->stashed = s;
    return 0;
}

static void put_back(int dirfd, const char *name, rec *r) {
    if (r->removed_dir) mkdirat(dirfd, name, r->removed_mode);
    else if (r->stashed) renameat(stashfd, r->stashed, dirfd, name);
}

/* xorshift64: the torn crash's draws, from its seed (never 0). */
static uint64_t rng_state;
static uint64_t next_rand(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static void keep_range(node *n, off_t from, off_t to) {
    if (n->nkept == n->capkept) {
        n->capkept = n->capkept ? 2 * n->capkept : 8;
        n->kept = realloc(n->kept, 2 * sizeof(off_t) * (size_t) n->capkept);
    }
    n->kept[2 * n->nkept] = from;
    n->kept[2 * n->nkept + 1] = to;
    n->nkept++;
    if (to > n->kept_end) n->kept_end = to;
}

/* Writes old[0, len) back at off, except over ranges a newer write kept: those bytes are newer than these. */
static void restore(node *n, const char *old, size_t len, off_t off) {
    off_t pos = off, end = off + (off_t) len;
    while (pos < end) {
        off_t next = end, covered_to = -1;
        for (int i = 0; i < n->nkept; i++) {
            off_t a = n->kept[2 * i], b = n->kept[2 * i + 1];
            if (a <= pos && pos < b) covered_to = b > covered_to ? b : covered_to;
            else if (a > pos && a < next) next = a;
        }
        if (covered_to >= 0) {
            pos = covered_to;
            continue;
        }
        if (pwrite(n->fd, old + (pos - off), (size_t) (next - pos), pos) != (ssize_t) (next - pos)) {
            fprintf(stderr, "cairn-lossyfs: undo of a write failed: %s\n", strerror(errno));
        }
        pos = next;
    }
}

/*
 * Undoes every change not yet durable, newest first; with `torn`, each write may instead stay whole or in part (see
 * the commands above), counted in *kept and *torn_writes.
 */
static void crash(int torn, long *changes, long *bytes, long *kept, long *torn_writes) {
    *changes = pending;
    *bytes = undo_bytes;
    *kept = *torn_writes = 0;
    while (tail) {
        rec *r = tail;
        switch (r->kind) {
        case R_DATA: {
            size_t keep = 0;
            if (torn && r->wlen > 0) {
                uint64_t d = next_rand() % 4;
                if (d == 2) {
                    keep = r->wlen;
                    (*kept)++;
                } else if (d == 3) {
                    keep = (size_t) (next_rand() % (r->wlen / 512 + 1)) * 512;
                    if (keep >= r->wlen) keep = 0;
                    (*torn_writes)++;
                }
            }
            if (keep > 0) keep_range(r->file, r->off, r->off + (off_t) keep);
            if (r->len > keep) restore(r->file, r->old + keep, r->len - keep, r->off + (off_t) keep);
            off_t size = r->old_size > r->file->kept_end ? r->old_size : r->file->kept_end;
            if (ftruncate(r->file->fd, size) != 0) fprintf(stderr, "cairn-lossyfs: undo of a size failed: %s\n", strerror(errno));
            break;
        }
        case R_NEW_NAME: {
            char *s = stash_name();
            renameat(r->dir1->fd, r->name1, stashfd, s); /* a new name that a later durable removal took is gone already */
            free(s);
            break;
        }
        case R_REMOVED_NAME:
            put_back(r->dir1->fd, r->name1, r);
            free(r->stashed);
            r->stashed = NULL;
            break;
        case R_RENAME:
            renameat(r->dir2->fd, r->name2, r->dir1->fd, r->name1);
            put_back(r->dir2->fd, r->name2, r);
            free(r->stashed);
            r->stashed = NULL;
            break;
        }
        drop(r, 0);
    }
    for (node *n = nodes; n; n = n->next) n->nkept = 0, n->kept_end = 0;
    syncfs(rootfd);
}

/* Journaled metadata: a sync commits every name change made before it. */
static void journal_committed(void) {
    for (rec *r = head, *next; r; r = next) {
        next = r->next;
        if (r->kind != R_DATA) drop(r, 1);
    }
}

/* fsync of a file: its data and size are durable. */
static void file_synced(int fd) {
    struct stat st;
    if (fstat(fd, &st) != 0) return;
    if (journaled) journal_committed();
    for (rec *r = head, *next; r; r = next) {
        next = r->next;
        if (r->kind == R_DATA && r->file->ino == st.st_ino && r->file->dev == st.st_dev) drop(r, 1);
    }
}

/* fsync of a directory: the names it holds are durable (a rename once both its directories are). */
static void dir_synced(int fd) {
    struct stat st;
    if (fstat(fd, &st) != 0) return;
    if (journaled) journal_committed();
    for (rec *r = head, *next; r; r = next) {
        next = r->next;
        if (r->kind == R_DATA) continue;
        if (r->dir1 && r->dir1->ino == st.st_ino && r->dir1->dev == st.st_dev) r->synced1 = 1;
        if (r->dir2 && r->dir2->ino == st.st_ino && r->dir2->dev == st.st_dev) r->synced2 = 1;
        if (r->synced1 && (r->kind != R_RENAME || r->synced2)) drop(r, 1);
    }
}

/* ---- the filesystem ---- */

static void *lfs_init(struct fuse_conn_info *conn, struct fuse_config *cfg) {
    conn->max_write = 1 << 20; /* a chunkserver's 1 MiB writes in one call, as far as the kernel allows */
    cfg->use_ino = 1;
    /* undo changes the backing files behind the kernel's back: it must not answer from stale caches */
    cfg->entry_timeout = 0;
    cfg->attr_timeout = 0;
    cfg->negative_timeout = 0;
    cfg->kernel_cache = 0;
    return NULL;
}

static int lfs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi) {
    int r = fi ? fstat((int) fi->fh, st) : fstatat(rootfd, rel(path), st, AT_SYMLINK_NOFOLLOW);
    return r == 0 ? 0 : -errno;
}

static int lfs_access(const char *path, int mask) {
    return faccessat(rootfd, rel(path), mask, AT_SYMLINK_NOFOLLOW) == 0 ? 0 : -errno;
}

static int lfs_readlink(const char *path, char *buf, size_t size) {
    ssize_t n = readlinkat(rootfd, rel(path), buf, size - 1);
    if (n < 0) return -errno;
    buf[n] = 0;
    return 0;
}

/* Runs `make` on the parent of `path` under the lock, recording the new name if it made one. */
static int make_name(const char *path, int (*make)(int dirfd, const char *name, const void *arg), const void *arg) {
    if (failing) return -EIO;
    char name[NAME_MAX + 1];
    int d = parent_of(path, name);
    if (d < 0) return -errno;
    pthread_mutex_lock(&mu);
    int r = make(d, name, arg);
    if (r == 0) new_name(d, name);
    pthread_mutex_unlock(&mu);
    close(d);
    return r;
}

static int do_mkdir(int d, const char *name, const void *mode) { return mkdirat(d, name, *(const mode_t *) mode) == 0 ? 0 : -errno; }
static int do_mknod(int d, const char *name, const void *mode) { return mknodat(d, name, *(const mode_t *) mode, 0) == 0 ? 0 : -errno; }
static int do_symlink(int d, const char *name, const void *target) { return symlinkat(target, d, name) == 0 ? 0 : -errno; }
static int do_link(int d, const char *name, const void *from) { return linkat(rootfd, rel(from), d, name, 0) == 0 ? 0 : -errno; }

static int lfs_mkdir(const char *path, mode_t mode) { return make_name(path, do_mkdir, &mode); }
static int lfs_mknod(const char *path, mode_t mode, dev_t dev) {
    (void) dev;
    if (!S_ISREG(mode) && !S_ISFIFO(mode)) return -EPERM;
    return make_name(path, do_mknod, &mode);
}
static int lfs_symlink(const char *target, const char *path) { return make_name(path, do_symlink, target); }
static int lfs_link(const char *from, const char *to) { return make_name(to, do_link, from); }

static int remove_name(const char *path, int dir) {
    if (failing) return -EIO;
    char name[NAME_MAX + 1];
    int d = parent_of(path, name);
    if (d < 0) return -errno;
    struct stat st;
    int r = fstatat(d, name, &st, AT_SYMLINK_NOFOLLOW) == 0 ? 0 : -errno;
    if (r == 0 && dir && !S_ISDIR(st.st_mode)) r = -ENOTDIR;
    if (r == 0 && !dir && S_ISDIR(st.st_mode)) r = -EISDIR;
    pthread_mutex_lock(&mu);
    if (r == 0) {
        rec *rc = append(R_REMOVED_NAME);
        r = take_out(d, name, rc);
        if (r == 0) {
            rc->dir1 = node_of(dup(d));
            rc->name1 = strdup(name);
        } else {
            drop(rc, 0);
        }
    }
    pthread_mutex_unlock(&mu);
    close(d);
    return r;
}

static int lfs_unlink(const char *path) { return remove_name(path, 0); }
static int lfs_rmdir(const char *path) { return remove_name(path, 1); }

static int lfs_rename(const char *from, const char *to, unsigned int flags) {
    if (flags & RENAME_EXCHANGE) return -EINVAL;
    if (failing) return -EIO;
    char n1[NAME_MAX + 1], n2[NAME_MAX + 1];
    int d1 = parent_of(from, n1);
    if (d1 < 0) return -errno;
    int d2 = parent_of(to, n2);
    if (d2 < 0) {
        int e = errno;
        close(d1);
        return -e;
    }
    pthread_mutex_lock(&mu);
    struct stat src, dst;
    int r = fstatat(d1, n1, &src, AT_SYMLINK_NOFOLLOW) == 0 ? 0 : -errno;
    rec *rc = NULL;
    if (r == 0 && fstatat(d2, n2, &dst, AT_SYMLINK_NOFOLLOW) == 0) {
        if (src.st_ino == dst.st_ino && src.st_dev == dst.st_dev) goto done; /* the same file: rename does nothing */
        if (flags & RENAME_NOREPLACE) r = -EEXIST;
        else if (S_ISDIR(dst.st_mode) && !S_ISDIR(src.st_mode)) r = -EISDIR;
        else if (!S_ISDIR(dst.st_mode) && S_ISDIR(src.st_mode)) r = -ENOTDIR;
        if (r == 0) {
            rc = append(R_RENAME);
            r = take_out(d2, n2, rc); /* fails with ENOTEMPTY for a directory that is not empty, as rename would */
        }
    } else if (r == 0) {
        rc = append(R_RENAME);
    }
    if (r == 0 && renameat(d1, n1, d2, n2) != 0) {
        r = -errno;
        put_back(d2, n2, rc);
        free(rc->stashed);
        rc->stashed = NULL;
    }
    if (rc && r == 0) {
        rc->dir1 = node_of(dup(d1));
        rc->dir2 = node_of(dup(d2));
        rc->name1 = strdup(n1);
        rc->name2 = strdup(n2);
    } else if (rc) {
        drop(rc, 0);
    }
done:
    pthread_mutex_unlock(&mu);
    close(d1);
    close(d2);
    return r;
}

static int lfs_chmod(const char *path, mode_t mode, struct fuse_file_info *fi) {
    int r = fi ? fchmod((int) fi->fh, mode) : fchmodat(rootfd, rel(path), mode, 0);
    return r == 0 ? 0 : -errno;
}

static int lfs_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi) {
    int r = fi ? fchown((int) fi->fh, uid, gid) : fchownat(rootfd, rel(path), uid, gid, AT_SYMLINK_NOFOLLOW);
    return r == 0 ? 0 : -errno;
}

static int lfs_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi) {
    int r = fi ? futimens((int) fi->fh, tv) : utimensat(rootfd, rel(path), tv, AT_SYMLINK_NOFOLLOW);
    return r == 0 ? 0 : -errno;
}

static int truncate_fd(int fd, off_t size) {
    if (stall()) return -EIO;
    struct stat st;
    if (fstat(fd, &st) != 0) return -errno;
    pthread_mutex_lock(&mu);
    int r = size < st.st_size ? save_data(fd, size, (size_t) (st.st_size - size)) : save_data(fd, st.st_size, 0);
    if (r == 0 && ftruncate(fd, size) != 0) r = -errno;
    pthread_mutex_unlock(&mu);
    return r;
}

static int lfs_truncate(const char *path, off_t size, struct fuse_file_info *fi) {
    if (fi) return truncate_fd((int) fi->fh, size);
    int fd = openat(rootfd, rel(path), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return -errno;
    int r = truncate_fd(fd, size);
    close(fd);
    return r;
}

/* The flags the backing file is opened with: O_DIRECT is served by bypassing the kernel's cache instead. */
static int backing_flags(struct fuse_file_info *fi) {
    if (fi->flags & O_DIRECT) fi->direct_io = 1;
    return (fi->flags & ~(O_DIRECT | O_CREAT | O_EXCL | O_TRUNC | O_NOFOLLOW)) | O_CLOEXEC;
}

static int lfs_open(const char *path, struct fuse_file_info *fi) {
    int fd = openat(rootfd, rel(path), backing_flags(fi));
    if (fd < 0) return -errno;
    fi->fh = (uint64_t) fd;
    if (fi->flags & O_TRUNC) {
        int r = truncate_fd(fd, 0);
        if (r != 0) {
            close(fd);
            return r;
        }
    }
    return 0;
}

static int lfs_create(const char *path, mode_t mode, struct fuse_file_info *fi) {
    if (failing) return -EIO;
    char name[NAME_MAX + 1];
    int d = parent_of(path, name);
    if (d < 0) return -errno;
    int flags = backing_flags(fi);
    pthread_mutex_lock(&mu);
    int r = 0, fd = openat(d, name, flags | O_CREAT | O_EXCL, mode);
    if (fd >= 0) {
        new_name(d, name);
    } else if (errno == EEXIST && !(fi->flags & O_EXCL)) {
        fd = openat(d, name, flags);
        if (fd < 0) r = -errno;
    } else {
        r = -errno;
    }
    pthread_mutex_unlock(&mu);
    close(d);
    if (r != 0) return r;
    fi->fh = (uint64_t) fd;
    if (fi->flags & O_TRUNC) {
        r = truncate_fd(fd, 0);
        if (r != 0) {
            close(fd);
            return r;
        }
    }
    return 0;
}

static int lfs_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi) {
    (void) path;
    if (stall()) return -EIO;
    ssize_t n = pread((int) fi->fh, buf, size, off);
    return n < 0 ? -errno : (int) n;
}

static int lfs_write(const char *path, const char *buf, size_t size, off_t off, struct fuse_file_info *fi) {
    (void) path;
    if (stall()) return -EIO;
    int fd = (int) fi->fh;
    if (fi->flags & O_APPEND) {
        struct stat st;
        if (fstat(fd, &st) != 0) return -errno;
        off = st.st_size;
    }
    pthread_mutex_lock(&mu);
    int r = save_data(fd, off, size);
    if (r == 0) tail->wlen = size;
    ssize_t n = r == 0 ? pwrite(fd, buf, size, off) : -1;
    if (r == 0 && n < 0) r = -errno;
    pthread_mutex_unlock(&mu);
    return r != 0 ? r : (int) n;
}

static int lfs_statfs(const char *path, struct statvfs *st) {
    (void) path;
    return fstatvfs(rootfd, st) == 0 ? 0 : -errno;
}

static int lfs_flush(const char *path, struct fuse_file_info *fi) {
    (void) path;
    (void) fi;
    return 0; /* close(2) makes nothing durable */
}

static int lfs_release(const char *path, struct fuse_file_info *fi) {
    (void) path;
    close((int) fi->fh);
    return 0;
}

static int lfs_fsync(const char *path, int datasync, struct fuse_file_info *fi) {
    (void) path;
    if (stall()) return -EIO;
    int fd = (int) fi->fh;
    pthread_mutex_lock(&mu);
    int r = (datasync ? fdatasync(fd) : fsync(fd)) == 0 ? 0 : -errno;
    if (r == 0) file_synced(fd);
    pthread_mutex_unlock(&mu);
    return r;
}

static int lfs_fallocate(const char *path, int mode, off_t off, off_t len, struct fuse_file_info *fi) {
    (void) path;
    if (mode != 0) return -EOPNOTSUPP;
    if (failing) return -EIO;
    int fd = (int) fi->fh;
    pthread_mutex_lock(&mu);
    int r = save_data(fd, off, 0); /* the contents stay; the size may grow, which undo takes back */
    if (r == 0) r = -posix_fallocate(fd, off, len);
    pthread_mutex_unlock(&mu);
    return r;
}

typedef struct {
    int fd;
    DIR *dir;
} open_dir;

static int lfs_opendir(const char *path, struct fuse_file_info *fi) {
    int fd = openat(rootfd, rel(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return -errno;
    open_dir *od = malloc(sizeof *od);
    od->fd = fd;
    od->dir = fdopendir(dup(fd));
    if (!od->dir) {
        int e = errno;
        close(fd);
        free(od);
        return -e;
    }
    fi->fh = (uint64_t) (uintptr_t) od;
    return 0;
}

static int lfs_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off, struct fuse_file_info *fi,
                       enum fuse_readdir_flags flags) {
    (void) off;
    (void) flags;
    open_dir *od = (open_dir *) (uintptr_t) fi->fh;
    int top = strcmp(path, "/") == 0;
    rewinddir(od->dir);
    struct dirent *e;
    while ((e = readdir(od->dir)) != NULL) {
        if (top && strcmp(e->d_name, STASH) == 0) continue;
        struct stat st = {0};
        st.st_ino = e->d_ino;
        st.st_mode = (mode_t) DTTOIF(e->d_type);
        if (fill(buf, e->d_name, &st, 0, 0)) break;
    }
    return 0;
}

static int lfs_releasedir(const char *path, struct fuse_file_info *fi) {
    (void) path;
    open_dir *od = (open_dir *) (uintptr_t) fi->fh;
    closedir(od->dir);
    close(od->fd);
    free(od);
    return 0;
}

static int lfs_fsyncdir(const char *path, int datasync, struct fuse_file_info *fi) {
    (void) path;
    (void) datasync;
    if (stall()) return -EIO;
    open_dir *od = (open_dir *) (uintptr_t) fi->fh;
    pthread_mutex_lock(&mu);
    int r = fsync(od->fd) == 0 ? 0 : -errno;
    if (r == 0) dir_synced(od->fd);
    pthread_mutex_unlock(&mu);
    return r;
}

static const struct fuse_operations ops = {
    .init = lfs_init,
    .getattr = lfs_getattr,
    .access = lfs_access,
    .readlink = lfs_readlink,
    .mknod = lfs_mknod,
    .mkdir = lfs_mkdir,
    .symlink = lfs_symlink,
    .unlink = lfs_unlink,
    .rmdir = lfs_rmdir,
    .rename = lfs_rename,
    .link = lfs_link,
    .chmod = lfs_chmod,
    .chown = lfs_chown,
    .truncate = lfs_truncate,
    .utimens = lfs_utimens,
    .open = lfs_open,
    .create = lfs_create,
    .read = lfs_read,
    .write = lfs_write,
    .statfs = lfs_statfs,
    .flush = lfs_flush,
    .release = lfs_release,
    .fsync = lfs_fsync,
    .fallocate = lfs_fallocate,
    .opendir = lfs_opendir,
    .readdir = lfs_readdir,
    .releasedir = lfs_releasedir,
    .fsyncdir = lfs_fsyncdir,
};

/* Reads commands until `quit` or the end of standard input, then unmounts, which ends the FUSE loop. */
static void *commands(void *arg) {
    (void) arg;
    char line[MAX_LINE];
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\r\n")] = 0;
        long changes, bytes;
        int ms;
        unsigned long long seed;
        if (strcmp(line, "crash") == 0) {
            long kept, torn;
            pthread_mutex_lock(&mu);
            crash(0, &changes, &bytes, &kept, &torn);
            pthread_mutex_unlock(&mu);
            say("ok crash undid %ld changes, %ld bytes", changes, bytes);
        } else if (sscanf(line, "crash torn %llu", &seed) == 1) {
            long kept, torn;
            pthread_mutex_lock(&mu);
            rng_state = seed ? (uint64_t) seed : 0x9E3779B97F4A7C15ULL;
            crash(1, &changes, &bytes, &kept, &torn);
            pthread_mutex_unlock(&mu);
            say("ok crash undid %ld changes, %ld bytes; %ld writes reached the disk whole, %ld in part", changes, bytes, kept, torn);
        } else if (sscanf(line, "stall %d", &ms) == 1 && ms >= 0) {
            stall_ms = ms;
            say("ok stall %d", ms);
        } else if (strcmp(line, "fail on") == 0 || strcmp(line, "fail off") == 0) {
            failing = strcmp(line, "fail on") == 0;
            say("ok fail %s", failing ? "on" : "off");
        } else if (strcmp(line, "stats") == 0) {
            pthread_mutex_lock(&mu);
            say("ok stats %ld changes, %ld bytes", pending, undo_bytes);
            pthread_mutex_unlock(&mu);
        } else if (strcmp(line, "quit") == 0) {
            break;
        } else {
            say("error unknown command '%s'", line);
        }
    }
    fuse_exit(fs);
    umount2(mount_point, MNT_DETACH); /* wakes the loop, which waits for the kernel's next request */
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 3 || argc > 4 || (argc == 4 && strcmp(argv[3], "strict") != 0 && strcmp(argv[3], "journaled") != 0)) {
        fprintf(stderr, "usage: cairn-lossyfs BACKING_DIR MOUNT_POINT [strict|journaled]\n");
        return 2;
    }
    journaled = argc == 4 && strcmp(argv[3], "journaled") == 0;
    rootfd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (rootfd < 0) {
        fprintf(stderr, "cairn-lossyfs: %s: %s\n", argv[1], strerror(errno));
        return 2;
    }
    if (mkdirat(rootfd, STASH, 0700) != 0 && errno != EEXIST) {
        fprintf(stderr, "cairn-lossyfs: %s/%s: %s\n", argv[1], STASH, strerror(errno));
        return 2;
    }
    stashfd = openat(rootfd, STASH, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    mount_point = realpath(argv[2], NULL);
    if (!mount_point) {
        fprintf(stderr, "cairn-lossyfs: %s: %s\n", argv[2], strerror(errno));
        return 2;
    }
    char *fargs[] = {argv[0], "-o", "fsname=cairn-lossyfs,subtype=lossyfs", NULL};
    struct fuse_args args = FUSE_ARGS_INIT(3, fargs);
    fs = fuse_new(&args, &ops, sizeof ops, NULL);
    if (!fs || fuse_mount(fs, mount_point) != 0) {
        fprintf(stderr, "cairn-lossyfs: cannot mount %s\n", mount_point);
        return 1;
    }
    pthread_t t;
    pthread_create(&t, NULL, commands, NULL);
    say("ok mounted %s", mount_point);
    int r = fuse_loop_mt(fs, 0);
    fuse_destroy(fs);
    return r < 0 ? 1 : 0;
}
