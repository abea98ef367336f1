#include "CVipsShims.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

// The only loaders that may ever run on untrusted input. Everything else (SVG, PDF,
// ImageMagick, OpenSlide, FITS, Matrix, CSV, raw, vips' own format, ...) is blocked for the
// whole process, so that no input can reach a loader we do not mean to expose.
static const char *const allowed_loaders[] = {
    "VipsForeignLoadJpeg", "VipsForeignLoadPng",  "VipsForeignLoadNsgif",
    "VipsForeignLoadWebp", "VipsForeignLoadHeif", "VipsForeignLoadTiff",
};

int cvipsshims_init(const char *argv0) {
    if (VIPS_INIT(argv0)) {
        return -1;
    }
    vips_cache_set_max(0);
    vips_cache_set_max_mem(0);
    vips_cache_set_max_files(0);
    vips_concurrency_set(1);
    vips_operation_block_set("VipsForeignLoad", TRUE);
    for (size_t i = 0; i < sizeof(allowed_loaders) / sizeof(allowed_loaders[0]); i++) {
        vips_operation_block_set(allowed_loaders[i], FALSE);
    }
    return 0;
}

void cvipsshims_trim_heap(void) {
#ifdef __GLIBC__
    malloc_trim(0);
#endif
}

void cvipsshims_set_mmap_threshold(int bytes) {
#ifdef __GLIBC__
    mallopt(M_MMAP_THRESHOLD, bytes);
#else
    (void)bytes;
#endif
}

void cvipsshims_set_arena_max(int arenas) {
#ifdef __GLIBC__
    mallopt(M_ARENA_MAX, arenas);
#else
    (void)arenas;
#endif
}

static cvipsshims_log_function log_function = NULL;

static void forward_log(const gchar *domain, GLogLevelFlags level, const gchar *message,
                        gpointer user_data) {
    (void)user_data;
    if (log_function != NULL) {
        log_function(domain, (int)level, message);
    }
}

void cvipsshims_set_log_handler(cvipsshims_log_function function) {
    log_function = function;
    g_log_set_handler("VIPS", (GLogLevelFlags)(G_LOG_LEVEL_MASK | G_LOG_FLAG_FATAL | G_LOG_FLAG_RECURSION),
                      forward_log, NULL);
}

char *cvipsshims_error_copy(void) { return vips_error_buffer_copy(); }

VipsImage *cvipsshims_header_from_source(VipsSource *source, const char *option_string) {
    return vips_image_new_from_source(source, option_string, "access", VIPS_ACCESS_SEQUENTIAL,
                                      NULL);
}

int cvipsshims_thumbnail_source(VipsSource *source, VipsImage **out, int width, int height,
                                const char *option_string, int no_rotate) {
    return vips_thumbnail_source(source, out, width, "height", height, "size", VIPS_SIZE_DOWN,
                                 "option_string", option_string, "no_rotate", no_rotate, NULL);
}

int cvipsshims_thumbnail_image(VipsImage *in, VipsImage **out, int width, int height) {
    return vips_thumbnail_image(in, out, width, "height", height, "size", VIPS_SIZE_DOWN, NULL);
}

int cvipsshims_colourspace(VipsImage *in, VipsImage **out, VipsInterpretation space) {
    return vips_colourspace(in, out, space, NULL);
}

int cvipsshims_icc_to_srgb(VipsImage *in, VipsImage **out) {
    return vips_icc_transform(in, out, "srgb", "embedded", TRUE, "intent", VIPS_INTENT_PERCEPTUAL,
                              "depth", 8, NULL);
}

int cvipsshims_cast(VipsImage *in, VipsImage **out, VipsBandFormat format) {
    return vips_cast(in, out, format, NULL);
}

int cvipsshims_extract_band(VipsImage *in, VipsImage **out, int band, int n) {
    return vips_extract_band(in, out, band, "n", n, NULL);
}

int cvipsshims_extract_area(VipsImage *in, VipsImage **out, int left, int top, int width,
                            int height) {
    return vips_extract_area(in, out, left, top, width, height, NULL);
}

int cvipsshims_attention(VipsImage *in, int width, int height, int *x, int *y) {
    VipsImage *cropped = NULL;
    int result = vips_smartcrop(in, &cropped, width, height, "interesting", VIPS_INTERESTING_ATTENTION,
                                "attention_x", x, "attention_y", y, NULL);
    if (cropped) g_object_unref(cropped);
    return result;
}

int cvipsshims_resize(VipsImage *in, VipsImage **out, double hscale, double vscale) {
    return vips_resize(in, out, hscale, "vscale", vscale, NULL);
}

int cvipsshims_arrayjoin_vertical(VipsImage **in, int n, VipsImage **out) {
    return vips_arrayjoin(in, out, n, "across", 1, NULL);
}

int cvipsshims_flatten_white(VipsImage *in, VipsImage **out) {
    double white[3] = {255.0, 255.0, 255.0};
    VipsArrayDouble *background = vips_array_double_new(white, 3);
    int status = vips_flatten(in, out, "background", background, NULL);
    vips_area_unref(VIPS_AREA(background));
    return status;
}

int cvipsshims_min(VipsImage *in, double *out) { return vips_min(in, out, NULL); }

int cvipsshims_copy(VipsImage *in, VipsImage **out) { return vips_copy(in, out, NULL); }

int cvipsshims_rot(VipsImage *in, VipsImage **out, VipsAngle angle) { return vips_rot(in, out, angle, NULL); }

int cvipsshims_jpegsave_buffer(VipsImage *in, void **buf, size_t *len, int quality, int strip) {
    return vips_jpegsave_buffer(in, buf, len, "Q", quality, "strip", strip, "optimize_coding",
                                TRUE, "interlace", FALSE, NULL);
}

int cvipsshims_pngsave_buffer(VipsImage *in, void **buf, size_t *len, int compression,
                              int palette, int quality, int bitdepth, int strip) {
    if (palette) {
        return vips_pngsave_buffer(in, buf, len, "compression", compression, "palette", TRUE,
                                   "Q", quality, "bitdepth", bitdepth, "strip", strip, NULL);
    }
    return vips_pngsave_buffer(in, buf, len, "compression", compression, "strip", strip, NULL);
}

int cvipsshims_gifsave_buffer(VipsImage *in, void **buf, size_t *len, int bitdepth, int effort,
                              double interframe_maxerror, int strip) {
    return vips_gifsave_buffer(in, buf, len, "bitdepth", bitdepth, "effort", effort,
                               "interframe_maxerror", interframe_maxerror, "strip", strip, NULL);
}
