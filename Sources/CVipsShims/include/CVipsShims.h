#ifndef CVIPSSHIMS_H
#define CVIPSSHIMS_H

#include <vips/vips.h>

// Why this target exists: Swift cannot call C variadic functions, and most of libvips' API
// takes optional arguments as a NULL-terminated (name, value) list. Each function here is a
// fixed-arity wrapper around exactly one such call, plus the process-wide setup that has to
// happen through macros (VIPS_INIT). Every function is prefixed with the module name.

/// Starts libvips once for the process: operation cache off (every job has its own inputs;
/// a cache only holds memory), one worker thread per operation (PushPrep parallelises across
/// inputs instead), and every loader blocked but the allow-listed ones.
/// Returns 0 on success, -1 on failure (the libvips error buffer says why).
int cvipsshims_init(const char *argv0);

/// Receives libvips' (GLib's) log messages: domain, GLib level bits, message.
typedef void (*cvipsshims_log_function)(const char *domain, int level, const char *message);

/// Routes the VIPS log domain (warnings such as "ignoring nclx profile") to `function` instead
/// of stderr, so the embedding program decides what is shown.
void cvipsshims_set_log_handler(cvipsshims_log_function function);

/// Copies and clears libvips' process-global error buffer. Free the result with g_free().
char *cvipsshims_error_copy(void);

/// Gives the memory glibc's malloc holds free, in every arena, back to the system
/// (malloc_trim(0), declared in <malloc.h>, which Swift's Glibc module does not import); does
/// nothing on other C libraries. PushPrep calls it after a big image (see FreedMemory.swift).
void cvipsshims_trim_heap(void);

/// Sets glibc's mmap threshold (mallopt(M_MMAP_THRESHOLD), from <malloc.h>): blocks of at
/// least `bytes` are mapped, and unmapped when freed, rather than kept in an arena. Setting it
/// ends glibc's own adjustment of the threshold. Does nothing on other C libraries.
void cvipsshims_set_mmap_threshold(int bytes);

/// Caps the number of glibc's malloc arenas (mallopt(M_ARENA_MAX)); arenas already made stay.
/// Does nothing on other C libraries.
void cvipsshims_set_arena_max(int arenas);

/// Reads the header of an image (no pixel decoding). `option_string` as in "[n=-1]" without
/// brackets, e.g. "n=-1,fail_on=error". Returns NULL on failure.
VipsImage *cvipsshims_header_from_source(VipsSource *source, const char *option_string);

/// Shrink-on-load thumbnail of a source: `width` is the target width, never upscaled
/// (size=down); `height` bounds the height (pass a large value for "width only").
/// EXIF orientation is applied unless `no_rotate`. `option_string` is passed to the loader,
/// which is the only way libvips 8.14 honours `fail_on` for source thumbnails.
int cvipsshims_thumbnail_source(VipsSource *source, VipsImage **out, int width, int height,
                                const char *option_string, int no_rotate);

/// Thumbnail of an image already in memory (e.g. a BMP PushPrep decoded itself).
int cvipsshims_thumbnail_image(VipsImage *in, VipsImage **out, int width, int height);

/// Converts to the given interpretation (e.g. VIPS_INTERPRETATION_sRGB).
int cvipsshims_colourspace(VipsImage *in, VipsImage **out, VipsInterpretation space);

/// Converts an RGB image from its embedded ICC profile to sRGB (8 bits per channel, perceptual
/// intent, libvips' built-in sRGB profile), keeping extra bands such as alpha. The caller has
/// checked that the embedded profile is an RGB one that is not sRGB.
int cvipsshims_icc_to_srgb(VipsImage *in, VipsImage **out);

/// Casts pixels to another band format (e.g. 16-bit to 8-bit after a colourspace change).
int cvipsshims_cast(VipsImage *in, VipsImage **out, VipsBandFormat format);

/// Extracts `n` bands starting at `band`.
int cvipsshims_extract_band(VipsImage *in, VipsImage **out, int band, int n);

/// Extracts a rectangle.
int cvipsshims_extract_area(VipsImage *in, VipsImage **out, int left, int top, int width,
                            int height);

/// libvips' attention strategy (vips_smartcrop, interesting=attention) for a `width` x `height`
/// crop of `in`: writes the centre of attention, in `in`'s pixels, to `x` and `y`. The cropped
/// image itself is dropped: the caller crops where it decides (a focal point may override).
int cvipsshims_attention(VipsImage *in, int width, int height, int *x, int *y);

/// Resizes by `hscale` horizontally and `vscale` vertically (lanczos3, as vips_resize).
int cvipsshims_resize(VipsImage *in, VipsImage **out, double hscale, double vscale);

/// Joins images vertically (one column), as libvips stores animation frames.
int cvipsshims_arrayjoin_vertical(VipsImage **in, int n, VipsImage **out);

/// Flattens an alpha channel onto white (for outputs that cannot be transparent, e.g. video).
int cvipsshims_flatten_white(VipsImage *in, VipsImage **out);

/// Minimum pixel value over the whole image.
int cvipsshims_min(VipsImage *in, double *out);

/// Makes a private copy so that metadata can be changed without touching shared images.
int cvipsshims_copy(VipsImage *in, VipsImage **out);

/// Turns the image clockwise by a multiple of 90 degrees (VIPS_ANGLE_D0/D90/D180/D270).
int cvipsshims_rot(VipsImage *in, VipsImage **out, VipsAngle angle);

/// Baseline JPEG with optimised Huffman tables; `strip` drops every metadata block.
int cvipsshims_jpegsave_buffer(VipsImage *in, void **buf, size_t *len, int quality, int strip);

/// PNG, optionally palette-quantised (`palette` with `quality` and `bitdepth`).
int cvipsshims_pngsave_buffer(VipsImage *in, void **buf, size_t *len, int compression,
                              int palette, int quality, int bitdepth, int strip);

/// GIF through cgif; `bitdepth` 1..8 bounds the palette, `effort` 1..10.
int cvipsshims_gifsave_buffer(VipsImage *in, void **buf, size_t *len, int bitdepth, int effort,
                              double interframe_maxerror, int strip);

#endif
