/* cl_cache.c: compiled program binaries on disk.
 *
 * One file per (device, driver, build options, source) under <cache_dir>/kernels/,
 * named by the FNV-1a 64 hash of the full key text: <16 hex digits>.clbin.
 *
 *   offset  size  field
 *        0     8  magic "XOCLBIN1"
 *        8     8  key length K (little-endian u64, as every number here)
 *       16     8  binary length B
 *       24     8  FNV-1a 64 over key and binary
 *       32     K  key text (compared in full: a hash collision is a miss)
 *     32+K     B  the binary from clGetProgramInfo(CL_PROGRAM_BINARIES)
 *
 * A file whose size, magic, key or checksum does not match is damaged: the caller
 * rebuilds from source and writes it again. So is anything but a regular file (a FIFO,
 * a directory, a symbolic link): entries are opened without blocking or following links. Writes go to a temporary file in the same
 * directory that is then renamed over the entry, so readers never see half a file. */
#include "cl_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define XO_CL_MAGIC "XOCLBIN1"
#define XO_CL_HEADER 32
#define XO_CL_MAX_ENTRY ((uint64_t)1 << 30)

uint64_t xo__cl_fnv1a(const void *data, size_t n, uint64_t h)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= UINT64_C(0x100000001b3);
    }
    return h;
}

static void put_u64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_u64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

int xo__cl_cache_path(const xo_plugin_host *host, const char *key, char *out, size_t cap)
{
    out[0] = '\0';
    if (!host->cache_dir || !host->cache_dir[0]) return 0;
    uint64_t h = xo__cl_fnv1a(key, strlen(key), XO_CL_FNV_BASIS);
    int n = snprintf(out, cap, "%s/kernels/%016llx.clbin", host->cache_dir, (unsigned long long)h);
    if (n < 0 || (size_t)n >= cap) {
        out[0] = '\0';
        return 0;
    }
    return 1;
}

int xo__cl_cache_load(const char *path, const char *key, unsigned char **out_bin, size_t *out_size, char *why,
                      size_t whycap)
{
    *out_bin = NULL;
    *out_size = 0;
    snprintf(why, whycap, "header, key or checksum does not match");
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return 0;
        snprintf(why, whycap, "%s", errno == ELOOP ? "is a symbolic link" : strerror(errno));
        return -1;
    }
    struct stat sb;
    FILE *f = NULL;
    if (fstat(fd, &sb) != 0)
        snprintf(why, whycap, "cannot stat: %s", strerror(errno));
    else if (!S_ISREG(sb.st_mode))
        snprintf(why, whycap, "is %s, not a regular file",
                 S_ISDIR(sb.st_mode) ? "a directory" : S_ISFIFO(sb.st_mode) ? "a FIFO" : "a special file");
    else if (!(f = fdopen(fd, "rb")))
        snprintf(why, whycap, "cannot read: %s", strerror(errno));
    if (!f) {
        close(fd);
        return -1;
    }
    int result = -1;
    unsigned char *data = NULL;
    unsigned char head[XO_CL_HEADER];
    size_t klen = strlen(key);
    if (fread(head, 1, sizeof head, f) != sizeof head) goto done;
    if (memcmp(head, XO_CL_MAGIC, 8) != 0) goto done;
    uint64_t file_klen = get_u64(head + 8), blen = get_u64(head + 16), sum = get_u64(head + 24);
    if (file_klen != klen || blen == 0 || blen > XO_CL_MAX_ENTRY ||
        (uint64_t)sb.st_size != XO_CL_HEADER + klen + blen)
        goto done;
    data = malloc(klen + blen);
    if (!data || fread(data, 1, klen + blen, f) != klen + blen) goto done;
    if (memcmp(data, key, klen) != 0) goto done;
    if (xo__cl_fnv1a(data, klen + blen, XO_CL_FNV_BASIS) != sum) goto done;
    /* Keep only the binary. */
    memmove(data, data + klen, blen);
    *out_bin = data;
    *out_size = (size_t)blen;
    data = NULL;
    result = 1;
done:
    free(data);
    fclose(f);
    return result;
}

/* mkdir -p for the entry's directory (cache_dir itself normally exists already). */
static int make_parent_dirs(const char *path)
{
    char dir[PATH_MAX];
    size_t n = strlen(path);
    if (n >= sizeof dir) return -1;
    memcpy(dir, path, n + 1);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir) return 0;
    *slash = '\0';
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(dir, 0755) != 0 && errno != EEXIST) return -1;
        *p = '/';
    }
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) return -1;
    return 0;
}

void xo__cl_cache_store(const xo_plugin_host *host, const char *path, const char *key,
                        const unsigned char *bin, size_t size)
{
    char tmp[PATH_MAX];
    static _Atomic unsigned serial;
    size_t klen = strlen(key);
    if (!path[0] || size == 0) return;
    if (make_parent_dirs(path) != 0) {
        host->log(XO_LOG_WARN, "opencl: kernel cache: cannot create the directory of %s: %s", path,
                  strerror(errno));
        return;
    }
    int n = snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%u", path, (long)getpid(), atomic_fetch_add(&serial, 1));
    if (n < 0 || (size_t)n >= sizeof tmp) return;

    unsigned char head[XO_CL_HEADER];
    memcpy(head, XO_CL_MAGIC, 8);
    put_u64(head + 8, klen);
    put_u64(head + 16, size);
    put_u64(head + 24, xo__cl_fnv1a(bin, size, xo__cl_fnv1a(key, klen, XO_CL_FNV_BASIS)));

    FILE *f = fopen(tmp, "wb");
    if (!f) {
        host->log(XO_LOG_WARN, "opencl: kernel cache: cannot write %s: %s", tmp, strerror(errno));
        return;
    }
    int ok = fwrite(head, 1, sizeof head, f) == sizeof head && fwrite(key, 1, klen, f) == klen &&
             fwrite(bin, 1, size, f) == size;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) {
        host->log(XO_LOG_WARN, "opencl: kernel cache: cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
        return;
    }
    host->log(XO_LOG_DEBUG, "opencl: kernel cache: wrote %s (%zu bytes)", path, size);
}
