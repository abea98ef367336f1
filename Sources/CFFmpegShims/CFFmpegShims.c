#include "CFFmpegShims.h"

#include <errno.h>
#include <libavutil/display.h>
#include <libavutil/time.h>
#include <linux/memfd.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

int cffmpegshims_error_eof(void) { return AVERROR_EOF; }
int cffmpegshims_error_eagain(void) { return AVERROR(EAGAIN); }
int cffmpegshims_error_exit(void) { return AVERROR_EXIT; }
int cffmpegshims_error_enomem(void) { return AVERROR(ENOMEM); }
int cffmpegshims_error_invaliddata(void) { return AVERROR_INVALIDDATA; }
int cffmpegshims_error_decoder_not_found(void) { return AVERROR_DECODER_NOT_FOUND; }
int64_t cffmpegshims_nopts_value(void) { return AV_NOPTS_VALUE; }
int cffmpegshims_time_base(void) { return AV_TIME_BASE; }
uint32_t cffmpegshims_mktag(char a, char b, char c, char d) { return MKTAG(a, b, c, d); }

static cffmpegshims_log_function log_function = NULL;

static void log_callback(void *avcl, int level, const char *format, va_list args) {
    if (log_function == NULL || level > av_log_get_level()) {
        return;
    }
    char line[1024];
    int print_prefix = 1;
    av_log_format_line2(avcl, level, format, args, line, sizeof(line), &print_prefix);
    log_function(level, line);
}

void cffmpegshims_set_log_callback(cffmpegshims_log_function function, int max_level) {
    log_function = function;
    av_log_set_level(max_level);
    av_log_set_callback(log_callback);
}

void cffmpegshims_deadline_cancel(cffmpegshims_deadline *deadline) {
    __atomic_store_n(&deadline->cancelled, 1, __ATOMIC_RELEASE);
}

int cffmpegshims_deadline_is_cancelled(const cffmpegshims_deadline *deadline) {
    return __atomic_load_n(&deadline->cancelled, __ATOMIC_ACQUIRE);
}

static int interrupt(void *opaque) {
    cffmpegshims_deadline *deadline = opaque;
    if (cffmpegshims_deadline_is_cancelled(deadline) ||
        (deadline->deadline_us > 0 && av_gettime_relative() > deadline->deadline_us)) {
        deadline->fired = 1;
        return 1;
    }
    return 0;
}

AVIOInterruptCB cffmpegshims_interrupt_callback(cffmpegshims_deadline *deadline) {
    AVIOInterruptCB callback = {.callback = interrupt, .opaque = deadline};
    return callback;
}

int64_t cffmpegshims_now_us(void) { return av_gettime_relative(); }

static int read_fd(void *opaque, uint8_t *buffer, int size) {
    int fd = (int)(intptr_t)opaque;
    for (;;) {
        ssize_t count = read(fd, buffer, (size_t)size);
        if (count < 0 && errno == EINTR) {
            continue;
        }
        if (count < 0) {
            return AVERROR(errno);
        }
        return count == 0 ? AVERROR_EOF : (int)count;
    }
}

static int64_t seek_fd(void *opaque, int64_t offset, int whence) {
    int fd = (int)(intptr_t)opaque;
    if (whence == AVSEEK_SIZE) {
        off_t current = lseek(fd, 0, SEEK_CUR);
        off_t end = lseek(fd, 0, SEEK_END);
        lseek(fd, current, SEEK_SET);
        return end < 0 ? AVERROR(errno) : end;
    }
    off_t position = lseek(fd, (off_t)offset, whence & ~AVSEEK_FORCE);
    return position < 0 ? AVERROR(errno) : position;
}

AVIOContext *cffmpegshims_avio_from_fd(int fd) {
    const int size = 64 * 1024;
    unsigned char *buffer = av_malloc(size);
    if (buffer == NULL) {
        return NULL;
    }
    AVIOContext *context =
        avio_alloc_context(buffer, size, 0, (void *)(intptr_t)fd, read_fd, NULL, seek_fd);
    if (context == NULL) {
        av_free(buffer);
    }
    return context;
}

void cffmpegshims_avio_free(AVIOContext **context) {
    if (context == NULL || *context == NULL) {
        return;
    }
    av_freep(&(*context)->buffer);
    avio_context_free(context);
}

int cffmpegshims_open_input(AVFormatContext **out, AVIOContext *pb, const char *format_whitelist,
                            const char *codec_whitelist, int max_streams, int64_t probesize,
                            int64_t analyze_duration_us, cffmpegshims_deadline *deadline) {
    AVFormatContext *context = avformat_alloc_context();
    if (context == NULL) {
        return AVERROR(ENOMEM);
    }
    context->pb = pb;
    context->flags |= AVFMT_FLAG_CUSTOM_IO;
    context->format_whitelist = av_strdup(format_whitelist);
    context->codec_whitelist = av_strdup(codec_whitelist);
    // No protocol is named "none": any nested open a demuxer attempts is refused.
    context->protocol_whitelist = av_strdup("none");
    context->protocol_blacklist = av_strdup("ALL");
    context->max_streams = max_streams;
    context->probesize = probesize;
    context->format_probesize = (int)(probesize > INT32_MAX ? INT32_MAX : probesize);
    context->max_analyze_duration = analyze_duration_us;
    context->interrupt_callback = cffmpegshims_interrupt_callback(deadline);
    if (context->format_whitelist == NULL || context->codec_whitelist == NULL ||
        context->protocol_whitelist == NULL) {
        avformat_free_context(context);
        return AVERROR(ENOMEM);
    }
    // On failure avformat_open_input frees the context (but not our custom pb).
    int status = avformat_open_input(&context, NULL, NULL, NULL);
    if (status < 0) {
        return status;
    }
    *out = context;
    return 0;
}

double cffmpegshims_stream_rotation(const AVStream *stream) {
    size_t size = 0;
    const uint8_t *matrix = av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, &size);
    if (matrix == NULL || size < 9 * sizeof(int32_t)) {
        return 0;
    }
    double degrees = av_display_rotation_get((const int32_t *)matrix);
    return degrees != degrees ? 0 : degrees;  // NaN for a degenerate matrix
}

int cffmpegshims_copy_display_matrix(const AVStream *from, AVStream *to) {
    size_t size = 0;
    const uint8_t *matrix = av_stream_get_side_data(from, AV_PKT_DATA_DISPLAYMATRIX, &size);
    if (matrix == NULL) {
        return 0;
    }
    uint8_t *copy = av_stream_new_side_data(to, AV_PKT_DATA_DISPLAYMATRIX, size);
    if (copy == NULL) {
        return AVERROR(ENOMEM);
    }
    memcpy(copy, matrix, size);
    return 0;
}

int cffmpegshims_set_rotation(AVStream *stream, double degrees) {
    uint8_t *matrix = av_stream_new_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, 9 * sizeof(int32_t));
    if (matrix == NULL) {
        return AVERROR(ENOMEM);
    }
    av_display_rotation_set((int32_t *)matrix, degrees);
    return 0;
}

int cffmpegshims_open_output(AVFormatContext *context, const char *path) {
    // Only the file protocol: a path that reads like a URL ("tcp:", "http:", "pipe:") is not
    // opened as one.
    AVDictionary *options = NULL;
    int status = av_dict_set(&options, "protocol_whitelist", "file", 0);
    if (status < 0) {
        return status;
    }
    status = avio_open2(&context->pb, path, AVIO_FLAG_READ_WRITE, &context->interrupt_callback, &options);
    av_dict_free(&options);
    return status;
}

int cffmpegshims_find_stream_info(AVFormatContext *context, int64_t max_pixels) {
    unsigned count = context->nb_streams;
    if (count == 0) {
        return avformat_find_stream_info(context, NULL);
    }
    AVDictionary **options = av_calloc(count, sizeof(*options));
    if (options == NULL) {
        return AVERROR(ENOMEM);
    }
    char pixels[32];
    snprintf(pixels, sizeof(pixels), "%lld", (long long)max_pixels);
    int status = 0;
    for (unsigned i = 0; i < count && status >= 0; i++) {
        status = av_dict_set(&options[i], "max_pixels", pixels, 0);
        if (status >= 0) {
            status = av_dict_set(&options[i], "threads", "1", 0);
        }
    }
    if (status >= 0) {
        status = avformat_find_stream_info(context, options);
    }
    for (unsigned i = 0; i < count; i++) {
        av_dict_free(&options[i]);
    }
    av_free(options);
    return status;
}

int cffmpegshims_channels(const AVCodecParameters *parameters) {
    return parameters->ch_layout.nb_channels;
}

int cffmpegshims_memfd(const char *name) { return (int)syscall(SYS_memfd_create, name, MFD_CLOEXEC); }
