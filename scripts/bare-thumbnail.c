/*
 * bare-thumbnail: the floor PushPrep's image path is measured against in `make bench`.
 *
 * Issue 16 asks PushPrep to come within 10% of "a bare C loop: N threads, vips_thumbnail +
 * jpegsave, nothing else". This is that loop, so every bench run prints the ratio against it
 * beside the ratio against vipsthumbnail. It does only what PushPrep must do to turn one photo
 * into the same attachment, with the same libvips calls and options, and nothing PushPrep adds
 * (no header pass, no hashing, no manifest, no alpha check, no quality ladder, no copy to memory).
 *
 * Usage:  bare-thumbnail JOBS WIDTH QUALITY OUTDIR INPUT...
 * Writes OUTDIR/<basename of INPUT without its extension>.jpg for each input. Exits 0 only when
 * every input produced its output; any libvips failure is reported on stderr with the file, and
 * the exit status is then 1 (2 for bad arguments or a failed start), so a broken baseline can
 * never look fast.
 *
 * scripts/bench.sh builds it into bench-out/ (not committed) with
 *     cc -O2 scripts/bare-thumbnail.c -o bench-out/bare-thumbnail $(pkg-config --cflags --libs vips) -pthread
 * and times it under /usr/bin/time over the same input set, interleaved with the pushprep and
 * vipsthumbnail runs, with JOBS = BENCH_JOBS, WIDTH 1290 and QUALITY 82.
 *
 * Choices, each mirroring Sources/CVipsShims/CVipsShims.c and Sources/PushPrepMedia/Image/:
 * - Threads: JOBS POSIX threads each take the next input from a shared atomic index, like
 *   `pushprep process --jobs JOBS`. libvips' own pool is set to one thread per pipeline with
 *   vips_concurrency_set(1), as cvipsshims_init does (and VIPS_CONCURRENCY in the environment
 *   is overridden by it, as in PushPrep), so exactly JOBS threads do the work in both programs.
 * - Caches: vips_cache_set_max(0), _max_mem(0), _max_files(0), as PushPrep: nothing is reused
 *   between inputs, and the operation cache would only hold memory.
 * - Decode: vips_thumbnail with the target width and a height of VIPS_MAX_COORD (only the width
 *   decides, as PushPrep's `unboundedHeight`; without it the default height equals the width
 *   and portrait photos would come out smaller), size=VIPS_SIZE_DOWN (never upscale), EXIF
 *   auto-rotation on (libvips' default, PushPrep passes no_rotate=0), and fail_on=error, which
 *   PushPrep passes to the loader in vips_thumbnail_source's option string.
 * - Colour: no import/export profile, as PushPrep (its outputs keep the decoded pixel values and
 *   drop the ICC profile with strip). Only when the thumbnail is not 8-bit sRGB (grey, 16-bit,
 *   CMYK...) it is converted with vips_colourspace to sRGB and cast to uchar, as
 *   ImageDecodeStep does; on ordinary sRGB photos this is a no-op check.
 * - Encode: vips_jpegsave with Q=QUALITY, strip (every metadata block, as PushPrep's first
 *   JPEG attempt), optimize_coding, no interlace (baseline), default chroma subsampling, which
 *   are PushPrep's cvipsshims_jpegsave_buffer options. Saving to a file instead of a buffer is
 *   the bare part: PushPrep writes the buffer itself.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vips/vips.h>

/* The same as PushPrep's `unboundedHeight`: libvips' largest coordinate. */
#define UNBOUNDED_HEIGHT VIPS_MAX_COORD

typedef struct {
    char **inputs;
    int count;
    int width;
    int quality;
    const char *outdir;
    atomic_int next;
    atomic_int failed;
} work_t;

/* OUTDIR/<stem>.jpg, newly allocated; NULL when it does not fit in PATH_MAX. */
static char *output_path(const char *outdir, const char *input) {
    const char *base = strrchr(input, '/');
    base = base ? base + 1 : input;
    const char *dot = strrchr(base, '.');
    int stem = dot && dot != base ? (int)(dot - base) : (int)strlen(base);
    char *path = malloc(PATH_MAX);
    if (path == NULL) {
        return NULL;
    }
    int n = snprintf(path, PATH_MAX, "%s/%.*s.jpg", outdir, stem, base);
    if (n < 0 || n >= PATH_MAX) {
        free(path);
        return NULL;
    }
    return path;
}

/* Reports the failed step with libvips' error buffer and clears it. The buffer is global to
 * the process, so under threads a message may include another input's error: the file name
 * printed here is the one that failed. */
static void report(const char *input, const char *step) {
    fprintf(stderr, "bare-thumbnail: %s: %s failed: %s", input, step, vips_error_buffer());
    vips_error_clear();
}

/* One input: 0 on success, -1 after reporting. Unrefs everything it made. */
static int process(const work_t *work, const char *input) {
    char *outpath = output_path(work->outdir, input);
    if (outpath == NULL) {
        fprintf(stderr, "bare-thumbnail: %s: output path too long or out of memory\n", input);
        return -1;
    }
    VipsImage *image = NULL;
    int status = -1;
    if (vips_thumbnail(input, &image, work->width, "height", UNBOUNDED_HEIGHT, "size",
                       VIPS_SIZE_DOWN, "fail_on", VIPS_FAIL_ON_ERROR, NULL)) {
        report(input, "vips_thumbnail");
        goto done;
    }
    if (image->Type != VIPS_INTERPRETATION_sRGB || image->BandFmt != VIPS_FORMAT_UCHAR) {
        VipsImage *converted = NULL;
        if (vips_colourspace(image, &converted, VIPS_INTERPRETATION_sRGB, NULL)) {
            report(input, "vips_colourspace");
            goto done;
        }
        g_object_unref(image);
        image = converted;
        if (image->BandFmt != VIPS_FORMAT_UCHAR) {
            if (vips_cast(image, &converted, VIPS_FORMAT_UCHAR, NULL)) {
                report(input, "vips_cast");
                goto done;
            }
            g_object_unref(image);
            image = converted;
        }
    }
    if (vips_jpegsave(image, outpath, "Q", work->quality, "strip", TRUE, "optimize_coding", TRUE,
                      "interlace", FALSE, NULL)) {
        report(input, "vips_jpegsave");
        /* A half-written file must not pass for an output in the bench's count. */
        unlink(outpath);
        goto done;
    }
    status = 0;
done:
    if (image != NULL) {
        g_object_unref(image);
    }
    free(outpath);
    return status;
}

static void *worker(void *arg) {
    work_t *work = arg;
    for (;;) {
        int i = atomic_fetch_add(&work->next, 1);
        if (i >= work->count) {
            break;
        }
        if (process(work, work->inputs[i]) != 0) {
            atomic_fetch_add(&work->failed, 1);
        }
    }
    /* Frees this thread's libvips buffers, as a thread that leaves libvips must. */
    vips_thread_shutdown();
    return NULL;
}

/* A whole decimal number in [min, max], or -1. */
static long parse(const char *text, long min, long max) {
    char *end = NULL;
    errno = 0;
    long value = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || value < min || value > max) {
        return -1;
    }
    return value;
}

int main(int argc, char **argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: %s JOBS WIDTH QUALITY OUTDIR INPUT...\n", argv[0]);
        return 2;
    }
    long jobs = parse(argv[1], 1, 256);
    long width = parse(argv[2], 1, VIPS_MAX_COORD);
    long quality = parse(argv[3], 1, 100);
    if (jobs < 0 || width < 0 || quality < 0) {
        fprintf(stderr, "bare-thumbnail: JOBS must be 1...256, WIDTH positive, QUALITY 1...100\n");
        return 2;
    }
    if (VIPS_INIT(argv[0])) {
        fprintf(stderr, "bare-thumbnail: vips_init failed: %s", vips_error_buffer());
        return 2;
    }
    vips_cache_set_max(0);
    vips_cache_set_max_mem(0);
    vips_cache_set_max_files(0);
    vips_concurrency_set(1);

    work_t work = {
        .inputs = argv + 5,
        .count = argc - 5,
        .width = (int)width,
        .quality = (int)quality,
        .outdir = argv[4],
    };
    atomic_init(&work.next, 0);
    atomic_init(&work.failed, 0);

    pthread_t *threads = calloc((size_t)jobs, sizeof(pthread_t));
    if (threads == NULL) {
        fprintf(stderr, "bare-thumbnail: out of memory\n");
        vips_shutdown();
        return 2;
    }
    long started = 0;
    int start_error = 0;
    for (; started < jobs; started++) {
        int rc = pthread_create(&threads[started], NULL, worker, &work);
        if (rc != 0) {
            fprintf(stderr, "bare-thumbnail: pthread_create: %s\n", strerror(rc));
            start_error = 1;
            break;
        }
    }
    /* With fewer threads than asked the inputs still all get done, but the timing would lie. */
    for (long t = 0; t < started; t++) {
        pthread_join(threads[t], NULL);
    }
    free(threads);
    int failed = atomic_load(&work.failed);
    vips_shutdown();
    if (start_error || started == 0) {
        return 2;
    }
    if (failed > 0) {
        fprintf(stderr, "bare-thumbnail: %d of %d inputs failed\n", failed, work.count);
        return 1;
    }
    return 0;
}
