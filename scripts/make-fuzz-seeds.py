#!/usr/bin/env python3
"""Writes the small seed inputs of Tests/FuzzCorpus/<target>/seed-* (committed; only needed when
this script changes). Crash inputs found by `make fuzz` sit beside them as crash-* files and are
never rewritten here. Media seeds are made with ffmpeg; every seed stays a few KB."""

import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "Tests", "FuzzCorpus")


def target(name):
    folder = os.path.join(CORPUS, name)
    os.makedirs(folder, exist_ok=True)
    for old in os.listdir(folder):
        if old.startswith("seed-"):
            os.remove(os.path.join(folder, old))
    return folder


def write(folder, name, data):
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(folder, "seed-" + name), "wb") as f:
        f.write(data)


# --- BMP: every header kind and pixel format the decoder supports, 3x2 pixels ---------------


def bmp(width, height, bpp, header=40, compression=0, palette=b"", masks=b"", body=None, top_down=False):
    stride = (width * bpp + 31) // 32 * 4
    if body is None:
        body = bytes((i * 37) & 0xFF for i in range(stride * height))
    if header == 12:
        info = struct.pack("<IHHHH", 12, width, height, 1, bpp)
    else:
        h = -height if top_down else height
        info = struct.pack("<IiiHHIIiiII", header, width, h, 1, bpp, compression, len(body), 2835, 2835,
                           len(palette) // 4, 0)
        info += masks
        info += bytes(header - len(info)) if header > len(info) else b""
    offset = 14 + len(info) + len(palette)
    return b"BM" + struct.pack("<IHHI", offset + len(body), 0, 0, offset) + info + palette + body


def bmps():
    folder = target("bmp")
    gray = b"".join(bytes((i * 16, i * 16, i * 16, 0)) for i in range(16))
    write(folder, "24bit.bmp", bmp(3, 2, 24))
    write(folder, "24bit-top-down.bmp", bmp(3, 2, 24, top_down=True))
    write(folder, "32bit-bgrx.bmp", bmp(3, 2, 32))
    write(folder, "32bit-v5-alpha.bmp",
          bmp(3, 2, 32, header=124, compression=3,
              masks=struct.pack("<IIII", 0x00FF0000, 0x0000FF00, 0x000000FF, 0xFF000000)))
    write(folder, "16bit-565.bmp", bmp(3, 2, 16, compression=3, masks=b"",
                                       palette=struct.pack("<III", 0xF800, 0x07E0, 0x001F)))
    write(folder, "16bit-555.bmp", bmp(3, 2, 16))
    write(folder, "8bit-palette.bmp", bmp(3, 2, 8, palette=gray))
    write(folder, "4bit-palette.bmp", bmp(3, 2, 4, palette=gray))
    write(folder, "1bit-palette.bmp", bmp(3, 2, 1, palette=gray[:8]))
    rle8 = bytes([2, 1, 0, 2, 1, 3, 0, 0, 0, 3, 4, 5, 6, 0, 0, 1])
    write(folder, "rle8.bmp", bmp(4, 2, 8, compression=1, palette=gray, body=rle8))
    rle4 = bytes([4, 0x12, 0, 0, 0, 4, 0x34, 0x56, 0, 1])
    write(folder, "rle4.bmp", bmp(4, 2, 4, compression=2, palette=gray, body=rle4))
    write(folder, "os2-core-24bit.bmp", bmp(3, 2, 24, header=12))


# --- Media: one tiny file per demuxer PushPrep allows ------------------------------------------


def media(tmp):
    video = ["-f", "lavfi", "-i", "testsrc2=size=16x16:rate=5:duration=0.4"]
    audio = ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=8000:duration=0.1"]
    cases = {
        "h264.mp4": video + ["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p"],
        "h264-aac.mov": video + audio + ["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p",
                                         "-c:a", "aac", "-shortest"],
        "vp9.webm": video + ["-c:v", "libvpx-vp9", "-deadline", "realtime"],
        "vp8.mkv": video + ["-c:v", "libvpx", "-deadline", "realtime"],
        "mpeg4.avi": video + ["-c:v", "mpeg4"],
        "h264.ts": video + ["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p"],
        "mp3.mp3": audio + ["-c:a", "libmp3lame", "-b:a", "8k"],
        "aac.aac": audio + ["-c:a", "aac", "-b:a", "8k"],
        "aac.m4a": audio + ["-c:a", "aac", "-b:a", "8k"],
        "pcm.wav": audio + ["-c:a", "pcm_u8", "-t", "0.05"],
        "pcm.aiff": audio + ["-c:a", "pcm_s16be", "-t", "0.02"],
        "flac.flac": audio + ["-c:a", "flac"],
        "alac.caf": audio + ["-c:a", "alac"],
        "vorbis.ogg": audio + ["-c:a", "libvorbis"] if encoder("libvorbis") else audio + ["-c:a", "flac"],
    }
    made = {}
    for name, args in cases.items():
        path = os.path.join(tmp, name)
        subprocess.run(["ffmpeg", "-v", "error", "-y", *args, "-map_metadata", "-1", "-fflags", "+bitexact",
                        path], check=True)
        with open(path, "rb") as f:
            made[name] = f.read()
    return made


def encoder(name):
    out = subprocess.run(["ffmpeg", "-hide_banner", "-encoders"], capture_output=True, text=True).stdout
    return any(line.split()[1:2] == [name] for line in out.splitlines() if line.startswith(" "))


def main():
    if shutil.which("ffmpeg") is None:
        sys.exit("ffmpeg is needed (make deps)")
    bmps()
    with tempfile.TemporaryDirectory() as tmp:
        made = media(tmp)
    folder = target("demux")
    for name, data in made.items():
        write(folder, name, data)

    # Detection sees at most 4096 bytes: the first 512 of each media seed and BMP, plus the
    # formats it only names to refuse.
    folder = target("detect")
    for name, data in made.items():
        write(folder, name, data[:512])
    write(folder, "24bit.bmp", bmp(3, 2, 24))
    write(folder, "png.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00")
    write(folder, "gif.gif", b"GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00,")
    write(folder, "webp.webp", b"RIFF\x24\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00\x2f\x00\x00\x00\x10")
    write(folder, "tiff.tif", b"II*\x00\x08\x00\x00\x00\x00\x00")
    write(folder, "baseline.jpg", b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
                                  b"\xff\xc0\x00\x0b\x08\x00\x01\x00\x01\x01\x01\x11\x00")
    write(folder, "lossless.jpg", b"\xff\xd8\xff\xc3\x00\x0b\x08\x00\x01\x00\x01\x01\x01\x11\x00")
    write(folder, "heic.heic", b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic")
    write(folder, "svg.svg", '<?xml version="1.0"?>\n<!-- c -->\n<svg xmlns="http://www.w3.org/2000/svg"/>')
    write(folder, "pdf.pdf", b"%PDF-1.4\n")
    write(folder, "jp2.jp2", b"\x00\x00\x00\x0cjP  \r\n\x87\n")

    folder = target("json")
    jpg = "https://cdn.example.com/push/photo.jpg"
    mp4 = "https://cdn.example.com/push/clip.mp4"
    payloads = {
        "apns.json": {"aps": {"alert": {"title": "T", "body": "B"}, "mutable-content": 1, "category": "NEWS",
                              "relevance-score": 0.5}, "attachment-url": jpg},
        "apns-silent.json": {"aps": {"content-available": 1}, "image": mp4},
        "onesignal.json": {"app_id": "a", "contents": {"en": "B"}, "headings": {"en": "T"},
                           "ios_attachments": {"id1": jpg}, "mutable_content": True},
        "airship.json": {"audience": "all", "device_types": ["ios"], "notification": {
            "alert": "B", "ios": {"mutable_content": True, "media_attachment": {
                "url": mp4, "options": {"time": 1.5, "hidden": False}}}}},
        "braze.json": {"apple_push": {"alert": {"body": "B"}, "asset_url": jpg, "asset_file_type": "jpg",
                                      "mutable_content": True}},
        "fcm.json": {"message": {"token": "t", "notification": {"title": "T", "image": jpg},
                                 "apns": {"payload": {"aps": {"mutable-content": 1}},
                                          "fcm_options": {"image": jpg}}}},
    }
    for name, value in payloads.items():
        write(folder, name, json.dumps(value, separators=(",", ":")))
    write(folder, "numbers-escapes.json",
          '{"aps":{"alert":"\\u00e9\\ud83d\\ude00\\n"},"n":[0,-0,1e308,-1.5E-7,12345678901234567890],'
          '"dup":1,"dup":2,"deep":[[[[{}]]]]}')

    folder = target("url")
    for i, text in enumerate([
        "https://cdn.example.com/push/photo.jpg?v=2#top",
        "http://93.184.216.34:8080/a.png",
        "https://[2606:2800:220:1:248:1893:25c8:1946]/clip.mp4",
        "https://b\u00fccher.example/cover.webp\n/other/path.gif",
        "https://cdn.example.com/a.jpg\nhttp://169.254.169.254/latest/meta-data",
        "http://[::ffff:127.0.0.1]/x",
        "https://user:pass@example.com/",
        "HTTPS://EXAMPLE.COM:443/%2e%2e/a.JPG",
    ]):
        write(folder, f"{i}.txt", text)

    folder = target("settings")
    settings = {"width": 1024, "quality": 80, "imageMaxBytes": 10000000, "maxPixels": 100000000,
                "maxInputBytes": 200000000, "jobs": 2, "baseURL": None, "videoStart": 0,
                "videoSeconds": 10, "videoWidth": 640, "videoMaxBytes": 50000000, "audioSeconds": 30,
                "audioMaxBytes": 5000000, "timeout": 120, "gifAsVideo": "auto", "gifMaxMemory": 100000000}
    write(folder, "full.json", json.dumps(settings))
    write(folder, "empty.json", "{}")
    write(folder, "base-url.json", '{"baseURL":"https://cdn.example.com/push","width":640,"gifAsVideo":"never"}')
    write(folder, "out-of-range.json", '{"videoStart":1e400,"maxPixels":9223372036854775807}')


if __name__ == "__main__":
    main()
