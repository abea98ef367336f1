#ifndef CFFMPEGSHIMS_H
#define CFFMPEGSHIMS_H

#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <stdint.h>

// Why this target exists: FFmpeg exposes error codes, timestamps and tags as macros
// (AVERROR(), AVERROR_EOF, AV_NOPTS_VALUE, MKTAG) that Swift cannot import, its log callback
// takes a va_list, and reading exactly one already-open file needs C callbacks for a custom
// AVIOContext. Every function here is prefixed with the module name.

/// AVERROR_EOF.
int cffmpegshims_error_eof(void);
/// AVERROR(EAGAIN).
int cffmpegshims_error_eagain(void);
/// AVERROR_EXIT: what an interrupted call returns.
int cffmpegshims_error_exit(void);
/// AVERROR(ENOMEM).
int cffmpegshims_error_enomem(void);
/// AVERROR_INVALIDDATA.
int cffmpegshims_error_invaliddata(void);
/// AVERROR_DECODER_NOT_FOUND.
int cffmpegshims_error_decoder_not_found(void);
/// AV_NOPTS_VALUE.
int64_t cffmpegshims_nopts_value(void);
/// AV_TIME_BASE.
int cffmpegshims_time_base(void);
/// MKTAG(a, b, c, d).
uint32_t cffmpegshims_mktag(char a, char b, char c, char d);

/// Receives libav's log lines, already formatted, with their AV_LOG_* level.
typedef void (*cffmpegshims_log_function)(int level, const char *line);
/// Routes every libav log line to `function` (nothing goes to stderr any more) and sets the
/// level above which lines are dropped before formatting.
void cffmpegshims_set_log_callback(cffmpegshims_log_function function, int max_level);

/// A per-input deadline and cancellation flag, checked by libav's interrupt callback.
typedef struct cffmpegshims_deadline {
    int64_t deadline_us;   // av_gettime_relative() value after which calls are interrupted; 0: none
    int cancelled;         // set from any thread: only through the two functions below
    volatile int fired;    // set when the callback interrupted a call (on the job's own thread)
} cffmpegshims_deadline;

/// Sets `deadline->cancelled` atomically: safe from any thread while the job runs.
void cffmpegshims_deadline_cancel(cffmpegshims_deadline *deadline);
/// Reads `deadline->cancelled` atomically.
int cffmpegshims_deadline_is_cancelled(const cffmpegshims_deadline *deadline);

/// The interrupt callback for `deadline` (store it in AVFormatContext.interrupt_callback).
AVIOInterruptCB cffmpegshims_interrupt_callback(cffmpegshims_deadline *deadline);
/// Microseconds on libav's monotonic clock.
int64_t cffmpegshims_now_us(void);

/// An AVIOContext reading (and seeking) an open file descriptor, never opening anything
/// else. The descriptor stays owned by the caller. Free with cffmpegshims_avio_free().
AVIOContext *cffmpegshims_avio_from_fd(int fd);
void cffmpegshims_avio_free(AVIOContext **context);

/// An anonymous in-memory file (memfd_create, close-on-exec): the fuzz entry for the demuxer
/// hands its bytes to MediaInput through /proc/self/fd/N without touching the disk. -1 and
/// errno on failure.
int cffmpegshims_memfd(const char *name);

/// Opens an input on `pb` with the safety limits applied before a single byte is parsed:
/// demuxer whitelist, no protocols at all (no nested opens: playlists, concat and image
/// sequences cannot reach another file), codec whitelist for probing decoders, a stream
/// limit, bounded probing, and the interrupt callback. Returns 0 or a negative AVERROR.
int cffmpegshims_open_input(AVFormatContext **out, AVIOContext *pb, const char *format_whitelist,
                            const char *codec_whitelist, int max_streams, int64_t probesize,
                            int64_t analyze_duration_us, cffmpegshims_deadline *deadline);

/// The display-matrix rotation of a stream in degrees (counter-clockwise, as
/// av_display_rotation_get), or 0 when it has none.
double cffmpegshims_stream_rotation(const AVStream *stream);

/// Copies the display matrix of `from` onto `to` (stream side data). Returns 0 or AVERROR.
int cffmpegshims_copy_display_matrix(const AVStream *from, AVStream *to);

/// Sets a display matrix of `degrees` on a stream. Returns 0 or AVERROR.
int cffmpegshims_set_rotation(AVStream *stream, double degrees);

/// Opens an output file for writing and reading back (the MP4 muxer's faststart pass reads
/// it), allowing only the file protocol (protocol_whitelist=file). Returns 0 or AVERROR.
int cffmpegshims_open_output(AVFormatContext *context, const char *path);

/// avformat_find_stream_info with, for every stream's probing decoder, `max_pixels` (no frame
/// larger is allocated: the pixel limit holds before anything is decoded) and one thread (a
/// frame-threaded decoder allocates a frame per thread). Returns >= 0 or AVERROR.
int cffmpegshims_find_stream_info(AVFormatContext *context, int64_t max_pixels);

/// The channel count of codec parameters (the channel layout API changed in 5.1).
int cffmpegshims_channels(const AVCodecParameters *parameters);

#endif
