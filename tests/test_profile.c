/* Profile files (round trip, damage, what-if files) and the profile cache seen through
 * the public API: XO_CALIBRATE=off writes nothing, auto measures once and then reads,
 * a damaged cache file is measured again and rewritten, and a cache entry that is not a
 * regular file (a FIFO, a directory, a huge file) is damaged too: never a hang. */
#include "xo_internal.h"
#include "xo_test.h"

#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char base_dir[1024];

/* A fresh empty directory under the test's cache directory. */
static void fresh_dir(const char *tag, char *out, size_t cap)
{
    static int serial;
    snprintf(out, cap, "%s/%s-%ld-%d", base_dir, tag, (long)getpid(), serial++);
}

/* A fresh cache directory named after `tag` as XO_CACHE_DIR, with XO_CALIBRATE=`calibrate`. */
static void use_fresh_cache(const char *tag, const char *calibrate, char *dir, size_t cap)
{
    fresh_dir(tag, dir, cap);
    setenv("XO_CACHE_DIR", dir, 1);
    setenv("XO_CALIBRATE", calibrate, 1);
}

static void write_text(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static char *read_text(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *buf = calloc(1, 1 << 16);
    assert_non_null(buf);
    *len = fread(buf, 1, (1 << 16) - 1, f);
    fclose(f);
    return buf;
}

/* mkdir -p */
static void make_dir(const char *path)
{
    char buf[1200];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *c = buf + 1; *c; c++)
        if (*c == '/') {
            *c = '\0';
            mkdir(buf, 0755);
            *c = '/';
        }
    if (mkdir(buf, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "cannot create %s: %s\n", buf, strerror(errno));
        exit(1);
    }
}

static void sample_profile(xo__profile *p)
{
    xo__profile_defaults(XO_DEVICE_GPU, "opencl", p);
    snprintf(p->info.name, sizeof p->info.name, "  Test GPU #1 (rev. 2) = fast   ");
    snprintf(p->info.vendor, sizeof p->info.vendor, "Example Corp");
    snprintf(p->info.driver, sizeof p->info.driver, "OpenCL 3.0 driver 1.2.3");
    snprintf(p->library_version, sizeof p->library_version, "%s", XO_VERSION_STRING);
    p->info.host_unified = 0;
    p->info.fp64 = 1;
    p->info.launch_us = 12.5;
    p->info.transfer_latency_us = 9.75;
    p->info.h2d_gbps = 11.25;
    p->info.d2h_gbps = 12.125;
    p->info.mem_gbps = 456.5;
    p->info.peak_gflops = 3999.5;
    for (int i = 0; i < XO_CURVE_POINTS; i++) {
        p->gemm_gflops[0][i] = 10.0 * (i + 1) * (i + 1) + 0.125;
        p->gemm_gflops[1][i] = 1.0 * (i + 1) + 0.5;
    }
    p->stream_gbps[0] = 401.5;
    p->stream_gbps[1] = 399.25;
    p->op_launch_us[XO_OP_GEMM] = 20.5;
}

static void assert_close(double got, double want)
{
    if (!(fabs(got - want) <= 1e-5 * fabs(want)))
        fail_msg("got %.9g, want %.9g", got, want);
}

static void profile_round_trip(void **state)
{
    (void)state;
    char dir[1200], path[1400];
    fresh_dir("roundtrip", dir, sizeof dir);
    snprintf(path, sizeof path, "%s/deeper/still/x.profile", dir); /* parents are created */
    xo__profile p, q;
    sample_profile(&p);
    assert_int_equal(xo__profile_write(path, &p), XO_OK);
    assert_int_equal(xo__profile_read(path, &q), XO_OK);
    assert_string_equal(q.info.plugin, "opencl");
    assert_string_equal(q.info.vendor, p.info.vendor);
    assert_string_equal(q.info.driver, p.info.driver);
    assert_string_equal(q.library_version, XO_VERSION_STRING);
    assert_int_equal(q.info.kind, XO_DEVICE_GPU);
    assert_int_equal(q.info.fp64, 1);
    assert_int_equal(q.info.host_unified, 0);
    assert_close(q.info.launch_us, p.info.launch_us);
    assert_close(q.info.transfer_latency_us, p.info.transfer_latency_us);
    assert_close(q.info.h2d_gbps, p.info.h2d_gbps);
    assert_close(q.info.d2h_gbps, p.info.d2h_gbps);
    assert_close(q.info.mem_gbps, p.info.mem_gbps);
    assert_close(q.info.peak_gflops, p.info.peak_gflops);
    for (int d = 0; d < 2; d++) {
        for (int i = 0; i < XO_CURVE_POINTS; i++)
            assert_close(q.gemm_gflops[d][i], p.gemm_gflops[d][i]);
        assert_close(q.stream_gbps[d], p.stream_gbps[d]);
    }
    for (int k = 0; k < XO_OP_KIND_COUNT; k++)
        assert_close(q.op_launch_us[k], p.op_launch_us[k]);
    /* '#' starts a comment and blanks around a value are trimmed: the name is written
     * without them, and the file still matches the device it was written for */
    assert_string_equal(q.info.name, "Test GPU  1 (rev. 2) = fast");
    assert_true(xo__profile_matches(&q, &p.info));
    /* the match check: same device and version */
    xo_device_info id = q.info;
    assert_true(xo__profile_matches(&q, &id));
    snprintf(id.driver, sizeof id.driver, "another driver");
    assert_false(xo__profile_matches(&q, &id));
    id = q.info;
    snprintf(q.library_version, sizeof q.library_version, "0.0.0-old");
    assert_false(xo__profile_matches(&q, &id));
    /* no temporary file left behind */
    char sub[1300];
    snprintf(sub, sizeof sub, "%s/deeper/still", dir);
    DIR *dp = opendir(sub);
    assert_non_null(dp);
    int nfiles = 0;
    for (struct dirent *e; (e = readdir(dp));)
        if (e->d_name[0] != '.')
            nfiles++;
    closedir(dp);
    assert_int_equal(nfiles, 1);
}

static void profile_damaged(void **state)
{
    (void)state;
    char dir[1200], good[1400], bad[1400];
    fresh_dir("damaged", dir, sizeof dir);
    snprintf(good, sizeof good, "%s/good.profile", dir);
    snprintf(bad, sizeof bad, "%s/bad.profile", dir);
    xo__profile p, q;
    sample_profile(&p);
    assert_int_equal(xo__profile_write(good, &p), XO_OK);
    size_t len;
    char *text = read_text(good, &len);

    /* missing */
    char missing[1400];
    snprintf(missing, sizeof missing, "%s/none.profile", dir);
    assert_int_equal(xo__profile_read(missing, &q), XO_ERR_IO);
    assert_non_null(strstr(xo_last_error(), "none.profile"));
    /* garbage */
    write_text(bad, "\x7f" "ELF\x01\x02 garbage\n\x00\xff\n", 16);
    assert_int_equal(xo__profile_read(bad, &q), XO_ERR_IO);
    /* empty */
    write_text(bad, "", 0);
    assert_int_equal(xo__profile_read(bad, &q), XO_ERR_IO);
    /* truncated half-way, and at every tenth of the file */
    for (int part = 1; part < 10; part++) {
        size_t cut = len * (size_t)part / 10;
        while (cut > 0 && text[cut - 1] == '\n')
            cut--; /* cut inside a line */
        write_text(bad, text, cut);
        assert_int_equal(xo__profile_read(bad, &q), XO_ERR_IO);
    }
    /* truncated at a line boundary: either refused, or no longer matching the device */
    for (size_t cut = 1; cut < len; cut++) {
        if (text[cut - 1] != '\n')
            continue;
        write_text(bad, text, cut);
        if (xo__profile_read(bad, &q) == XO_OK)
            assert_false(xo__profile_matches(&q, &p.info));
    }
    /* wrong header */
    char *edited = malloc(len + 64);
    assert_non_null(edited);
    snprintf(edited, len + 64, "# crossover device profile v2%s", strchr(text, '\n'));
    write_text(bad, edited, strlen(edited));
    assert_int_equal(xo__profile_read(bad, &q), XO_ERR_IO);
    assert_non_null(strstr(xo_last_error(), "first line"));
    /* NaN, negative, non-numeric, bad kind, bad flag, a line without '=' */
    static const char *const lines[] = {"mem_gbps = nan\n", "mem_gbps = -5\n", "launch_us = fast\n",
                                        "h2d_gbps = 1e999\n", "kind = tpu\n", "fp64 = yes\n",
                                        "this line is nonsense\n", "sgemm_gflops_64 = 12x\n",
                                        "peak_gflops =\n"};
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
        snprintf(edited, len + 64, "%s%s", text, lines[i]);
        write_text(bad, edited, strlen(edited));
        if (xo__profile_read(bad, &q) != XO_ERR_IO)
            fail_msg("accepted a profile with the line \"%s\"", lines[i]);
        assert_non_null(strstr(xo_last_error(), "damaged"));
    }
    /* unknown keys and comments are fine; the last value of a key wins */
    snprintf(edited, len + 64, "%s  # a comment\nfuture_key = whatever\n\nmem_gbps = 77 # tuned\n", text);
    write_text(bad, edited, strlen(edited));
    assert_int_equal(xo__profile_read(bad, &q), XO_OK);
    assert_true(q.info.mem_gbps == 77.0);
    free(edited);
    free(text);
}

static void profile_what_if(void **state)
{
    (void)state;
    char dir[1200], path[1400];
    fresh_dir("whatif", dir, sizeof dir);
    make_dir(base_dir);
    make_dir(dir);
    snprintf(path, sizeof path, "%s/gpu.profile", dir);
    static const char text[] = "# crossover device profile v1\n"
                               "# a GPU I might buy\n"
                               "plugin = cuda\n"
                               "name = Imaginary 9000\n"
                               "kind = gpu\n"
                               "fp64 = 1\n"
                               "launch_us = 8\n"
                               "transfer_latency_us = 5\n"
                               "h2d_gbps = 25\n"
                               "d2h_gbps = 25\n"
                               "mem_gbps = 1000\n"
                               "peak_gflops = 20000\n";
    write_text(path, text, strlen(text));
    xo__profile q;
    assert_int_equal(xo__profile_read(path, &q), XO_OK);
    assert_string_equal(q.info.name, "Imaginary 9000");
    /* the curve comes from the peak: positive, rising, topping out at the peak */
    double top = 0.0;
    for (int i = 0; i < XO_CURVE_POINTS; i++) {
        assert_true(q.gemm_gflops[0][i] > 0.0 && q.gemm_gflops[1][i] > 0.0);
        if (i > 0)
            assert_true(q.gemm_gflops[0][i] >= q.gemm_gflops[0][i - 1]);
        top = fmax(top, q.gemm_gflops[0][i]);
    }
    assert_true(top == 20000.0);
    assert_true(q.stream_gbps[0] == 1000.0 && q.stream_gbps[1] == 1000.0);
    assert_false(xo__profile_matches(&q, &q.info)); /* no library_version: never a cache hit */
    /* a required figure missing */
    static const char partial[] = "# crossover device profile v1\nkind = gpu\nlaunch_us = 8\n";
    write_text(path, partial, strlen(partial));
    assert_int_equal(xo__profile_read(path, &q), XO_ERR_IO);
    assert_non_null(strstr(xo_last_error(), "missing key"));
    /* no newline at the end: truncated */
    write_text(path, text, strlen(text) - 1);
    assert_int_equal(xo__profile_read(path, &q), XO_ERR_IO);
}

static void profile_filenames(void **state)
{
    (void)state;
    xo_device_info a;
    memset(&a, 0, sizeof a);
    snprintf(a.plugin, sizeof a.plugin, "opencl");
    snprintf(a.name, sizeof a.name, "cpu-Intel(R) Core(TM) i7 / \"x\"");
    snprintf(a.driver, sizeof a.driver, "6.0");
    char f1[256], f2[256];
    xo__profile_filename(&a, f1, sizeof f1);
    assert_int_equal(strncmp(f1, "opencl-", 7), 0);
    assert_non_null(strstr(f1, ".profile"));
    assert_null(strchr(f1, '/'));
    assert_null(strchr(f1, ' '));
    assert_null(strchr(f1, '"'));
    snprintf(a.driver, sizeof a.driver, "6.1");
    xo__profile_filename(&a, f2, sizeof f2);
    assert_string_not_equal(f1, f2);
}

/* ---- the cache through the public API ---------------------------------------------- */

static int count_profiles(const char *dir)
{
    DIR *dp = opendir(dir);
    if (!dp)
        return 0;
    int n = 0;
    for (struct dirent *e; (e = readdir(dp));) {
        size_t l = strlen(e->d_name);
        if (l > 8 && strcmp(e->d_name + l - 8, ".profile") == 0)
            n++;
    }
    closedir(dp);
    return n;
}

static void device_path(const xo_context *ctx, const char *dir, int d, char *out, size_t cap)
{
    xo_device_info info;
    assert_int_equal(xo_device_get_info(ctx, d, &info), XO_OK);
    char file[256];
    xo__profile_filename(&info, file, sizeof file);
    int n = snprintf(out, cap, "%s/%s", dir, file);
    assert_true(n > 0 && (size_t)n < cap);
}

static void calibrate_off_writes_nothing(void **state)
{
    (void)state;
    char dir[1200];
    use_fresh_cache("off", "off", dir, sizeof dir);
    xo_context *ctx = NULL;
    assert_int_equal(xo_context_create(&ctx), XO_OK);
    xo_device_info info;
    assert_int_equal(xo_device_get_info(ctx, 0, &info), XO_OK);
    xo__profile def;
    xo__profile_defaults(info.kind, info.plugin, &def);
    assert_true(info.launch_us == def.info.launch_us);
    assert_true(info.peak_gflops == def.info.peak_gflops);
    for (int d = 0; d < xo_device_count(ctx); d++) {
        assert_int_equal(xo_device_get_info(ctx, d, &info), XO_OK);
        assert_true(info.launch_us > 0.0 && info.peak_gflops > 0.0 && info.mem_gbps > 0.0);
    }
    xo_context_destroy(ctx);
    assert_int_equal(count_profiles(dir), 0);
}

static void calibrate_auto_caches(void **state)
{
    (void)state;
    char dir[1200], path[1400];
    use_fresh_cache("auto", "auto", dir, sizeof dir);
    xo_context *ctx = NULL;
    double t0 = xo__now_us();
    assert_int_equal(xo_context_create(&ctx), XO_OK);
    double first_us = xo__now_us() - t0;
    int ndev = xo_device_count(ctx);
    /* The CPU is measured at creation; other devices start from provisional defaults and
     * are measured in the background, so the context is usable at once. */
    assert_true(count_profiles(dir) >= 1); /* the CPU's, written at creation */
    /* Devices on the host's cores (PoCL) are measured when asked, as xo info does. */
    xo__background_measure_all(ctx);
    for (int d = 0; d < ndev; d++) { /* provisional only when the measurement was not trustworthy */
        xo__profile q = ctx->dev[d].profile;
        q.provisional = 0;
        assert_false(ctx->dev[d].profile.provisional && xo__profile_trustworthy(&q, NULL, 0));
    }
    assert_int_equal(count_profiles(dir), ndev);
    struct stat st0[XO_MAX_DEVICES];
    int trusted[XO_MAX_DEVICES], all_trusted = 1;
    for (int d = 0; d < ndev; d++) {
        device_path(ctx, dir, d, path, sizeof path);
        assert_int_equal(stat(path, &st0[d]), 0);
        xo__profile p;
        assert_int_equal(xo__profile_read(path, &p), XO_OK);
        /* a measurement that is not trustworthy (a busy machine) is measured again */
        trusted[d] = xo__profile_trustworthy(&p, NULL, 0) || p.untrusted_runs >= XO_UNTRUSTED_MAX;
        all_trusted &= trusted[d];
        xo_device_info info;
        assert_int_equal(xo_device_get_info(ctx, d, &info), XO_OK);
        assert_true(xo__profile_matches(&p, &info));
        /* what the context uses is what the file says */
        assert_true(info.launch_us == p.info.launch_us && info.launch_us > 0.0);
        assert_true(info.peak_gflops == p.info.peak_gflops && info.peak_gflops > 0.0);
        assert_true(info.mem_gbps == p.info.mem_gbps && info.mem_gbps > 0.0);
        if (d == 0)
            assert_true(info.h2d_gbps == 0.0 && info.transfer_latency_us == 0.0);
        else
            assert_true(info.h2d_gbps > 0.0 && info.d2h_gbps > 0.0);
        /* calibration runs are not the user's ops */
        xo_stats s;
        assert_int_equal(xo_stats_get(ctx, d, &s), XO_OK);
        assert_true(s.ops == 0 && s.bytes_in == 0 && s.bytes_out == 0 && s.transfers == 0);
    }
    xo_context_destroy(ctx);

    /* a second context reads the profiles: no file is rewritten */
    t0 = xo__now_us();
    assert_int_equal(xo_context_create(&ctx), XO_OK);
    double second_us = xo__now_us() - t0;
    print_message("context create: %.1f ms (the CPU measured, other devices in the background), %.1f ms reading "
                  "the cache\n",
                  first_us * 1e-3,
                  second_us * 1e-3);
    for (int d = 0; d < ndev; d++) {
        struct stat st1;
        device_path(ctx, dir, d, path, sizeof path);
        assert_int_equal(stat(path, &st1), 0);
        if (!trusted[d])
            continue;
        assert_true(st1.st_mtim.tv_sec == st0[d].st_mtim.tv_sec && st1.st_mtim.tv_nsec == st0[d].st_mtim.tv_nsec);
        assert_true(st1.st_ino == st0[d].st_ino); /* a rewrite renames a new file over it */
    }
    if (all_trusted)
        assert_true(second_us < first_us);
    char path0[1400];
    device_path(ctx, dir, 0, path0, sizeof path0);
    xo_context_destroy(ctx);

    /* a damaged cache file is measured again and rewritten; the others are kept */
    write_text(path0, "# crossover device profile v1\nlaunch_us = 0.0", 45);
    /* Compare with the damaged file's own inode, which stays in use until the rename: the
     * first file's inode is free again when a busy run rewrote it above, and the
     * filesystem may hand it to the new file. */
    struct stat damaged, st2;
    assert_int_equal(stat(path0, &damaged), 0);
    assert_int_equal(xo_context_create(&ctx), XO_OK);
    assert_int_equal(stat(path0, &st2), 0);
    assert_true(st2.st_ino != damaged.st_ino);
    xo__profile p;
    assert_int_equal(xo__profile_read(path0, &p), XO_OK);
    xo_device_info info;
    assert_int_equal(xo_device_get_info(ctx, 0, &info), XO_OK);
    assert_true(xo__profile_matches(&p, &info));
    assert_true(info.launch_us == p.info.launch_us && info.launch_us > 0.0);
    for (int d = 1; d < ndev; d++) {
        device_path(ctx, dir, d, path, sizeof path);
        assert_int_equal(stat(path, &st2), 0);
        assert_true(st2.st_ino == st0[d].st_ino || !trusted[d]);
    }
    xo_context_destroy(ctx);
    assert_int_equal(count_profiles(dir), ndev);
}

static int count_suffix(const char *dir, const char *needle)
{
    DIR *dp = opendir(dir);
    int n = 0;
    for (struct dirent *e; dp && (e = readdir(dp));)
        n += strstr(e->d_name, needle) != NULL;
    if (dp)
        closedir(dp);
    return n;
}

/* A context destroyed while its devices are still measured in the background stops the
 * measurement, leaves no half-written file, and the next context measures again. */
static void background_cancelled_on_destroy(void **state)
{
    (void)state;
    char dir[1200];
    use_fresh_cache("cancel", "auto", dir, sizeof dir);
    xo_context *ctx = NULL;
    assert_int_equal(xo_context_create(&ctx), XO_OK);
    int ndev = xo_device_count(ctx);
    int background = ctx->background != NULL, beside = 0;
    for (int d = 1; d < ndev; d++) /* devices on the host's cores are not measured beside the program */
        beside |= !xo__device_on_host_cores(&ctx->dev[d].info);
    xo_context_destroy(ctx); /* at once */
    assert_int_equal(count_suffix(dir, ".tmp."), 0);
    assert_true(count_profiles(dir) >= 1 && count_profiles(dir) <= ndev);
    if (ndev < 2)
        return;
    assert_int_equal(background, beside);
    assert_int_equal(xo_context_create(&ctx), XO_OK);
    xo__background_measure_all(ctx);
    assert_int_equal(count_profiles(dir), ndev);
    for (int d = 0; d < ndev; d++)
        assert_true(ctx->dev[d].info.launch_us > 0.0 && ctx->dev[d].info.peak_gflops > 0.0);
    xo_context_destroy(ctx);
}

/* A hang must fail the test, not block CI. */
static int g_stderr_fd = 2; /* the real stderr while it is captured */

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "FAIL: blocked on a profile cache entry\n";
    ssize_t w = write(g_stderr_fd, msg, sizeof msg - 1);
    (void)w;
    _exit(1);
}

/* Create a context (XO_CALIBRATE=auto, only the CPU) with XO_LOG=warn; returns stderr. */
static char *create_logged(void)
{
    xot_capture cerr;
    assert_int_equal(xot_capture_begin(&cerr, 2), 0);
    g_stderr_fd = cerr.saved;
    setenv("XO_LOG", "warn", 1);
    signal(SIGALRM, on_alarm);
    alarm(30);
    xo_context *ctx = NULL;
    xo_status st = xo_context_create(&ctx);
    alarm(0);
    unsetenv("XO_LOG");
    char *err = xot_capture_end(&cerr);
    g_stderr_fd = 2;
    assert_non_null(err);
    if (st != XO_OK)
        fail_msg("xo_context_create: %s (%s)", xo_status_string(st), xo_last_error());
    xo_context_destroy(ctx);
    return err;
}

static void expect_warning(const char *err, const char *what)
{
    if (!xot_contains(err, what) || !xot_contains(err, "not a regular file"))
        fail_msg("want a warning that the profile %s, not a regular file; stderr was:\n%s", what, err);
}

static void cache_entry_not_a_file(void **state)
{
    (void)state;
    char dir[1200], path[1400];
    fresh_dir("special", dir, sizeof dir);
    make_dir(dir);
    setenv("XO_CACHE_DIR", dir, 1);
    setenv("XO_PLUGINS", "cpu", 1);
    setenv("XO_CALIBRATE", "off", 1);
    xo_context *ctx = NULL;
    assert_int_equal(xo_context_create(&ctx), XO_OK);
    device_path(ctx, dir, 0, path, sizeof path);
    xo_context_destroy(ctx);
    setenv("XO_CALIBRATE", "auto", 1);

    /* a FIFO: measured again, and the profile written over it */
    assert_int_equal(mkfifo(path, 0644), 0);
    char *err = create_logged();
    expect_warning(err, "FIFO");
    free(err);
    struct stat sb;
    assert_int_equal(lstat(path, &sb), 0);
    assert_true(S_ISREG(sb.st_mode));
    xo__profile p;
    assert_int_equal(xo__profile_read(path, &p), XO_OK);

    /* a directory: measured again; it cannot be replaced, and the warnings say why */
    assert_int_equal(unlink(path), 0);
    assert_int_equal(mkdir(path, 0755), 0);
    err = create_logged();
    expect_warning(err, "is a directory");
    free(err);
    assert_int_equal(xo__profile_read(path, &p), XO_ERR_IO);
    assert_true(xot_contains(xo_last_error(), "is a directory, not a regular file"));
    assert_int_equal(rmdir(path), 0);

    /* a huge (sparse) file is refused by its size, without reading it */
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, (off_t)1 << 32), 0);
    close(fd);
    assert_int_equal(xo__profile_read(path, &p), XO_ERR_IO);
    assert_true(xot_contains(xo_last_error(), "bytes"));
    err = create_logged();
    free(err);
    assert_int_equal(xo__profile_read(path, &p), XO_OK);
    unsetenv("XO_PLUGINS");
}

int main(void)
{
    const char *env = getenv("XO_CACHE_DIR");
    snprintf(base_dir, sizeof base_dir, "%s", env && *env ? env : "xo_test_profile_cache");
    make_dir(base_dir);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(profile_round_trip),
        cmocka_unit_test(profile_damaged),
        cmocka_unit_test(profile_what_if),
        cmocka_unit_test(profile_filenames),
        cmocka_unit_test(calibrate_off_writes_nothing),
        cmocka_unit_test(calibrate_auto_caches),
        cmocka_unit_test(background_cancelled_on_destroy),
        cmocka_unit_test(cache_entry_not_a_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
