"""What a base64 media payload measures, read from its first bytes: an image's pixel size (PNG, JPEG,
GIF, WebP headers) and a PDF's page count. Providers count an image by its pixels and a PDF by its
pages (behavior.md#d15); nothing here decodes more than it needs, and a payload that does not say
gives None (the caller then counts a documented constant)."""

from __future__ import annotations

import base64
import binascii
import re
import struct

# A JPEG's frame header can follow large EXIF or ICC blocks: 64 KiB of base64 (48 KiB of bytes)
# holds it for ordinary camera and screenshot files.
HEAD_CHARS = 65_536
MAX_PDF_CHARS = 64 * 1024 * 1024  # a PDF payload decoded to count its pages, at most
JPEG_FRAMES = frozenset({0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF})
JPEG_STANDALONE = frozenset({0x01, *range(0xD0, 0xDA)})
PDF_PAGE = re.compile(rb"/Type\s*/Page(?![a-zA-Z])")
PDF_COUNT = re.compile(rb"/Type\s*/Pages\b[^>]*?/Count\s+(\d+)|/Count\s+(\d+)[^>]*?/Type\s*/Pages\b")


def decoded_head(payload: str, chars: int = HEAD_CHARS) -> bytes | None:
    """The first bytes of a base64 payload (URL-safe alphabet too), or None when it is not base64."""
    head = payload[: chars - chars % 4].strip()
    head += "=" * (-len(head) % 4)
    try:
        return base64.b64decode(head.replace("-", "+").replace("_", "/"), validate=True)
    except (binascii.Error, ValueError):
        return None


def image_size(payload: str) -> tuple[int, int] | None:
    """(width, height) in pixels from a PNG, JPEG, GIF or WebP header; None when unknown."""
    data = decoded_head(payload)
    if data is None:
        return None
    for reader in (_png, _gif, _webp, _jpeg):
        size = reader(data)
        if size is not None:
            return size if size[0] > 0 and size[1] > 0 else None
    return None


def _png(data: bytes) -> tuple[int, int] | None:
    if data[:8] != b"\x89PNG\r\n\x1a\n" or len(data) < 24 or data[12:16] != b"IHDR":
        return None
    width, height = struct.unpack(">II", data[16:24])
    return int(width), int(height)


def _gif(data: bytes) -> tuple[int, int] | None:
    if data[:6] not in (b"GIF87a", b"GIF89a") or len(data) < 10:
        return None
    width, height = struct.unpack("<HH", data[6:10])
    return int(width), int(height)


def _webp(data: bytes) -> tuple[int, int] | None:
    if data[:4] != b"RIFF" or data[8:12] != b"WEBP" or len(data) < 30:
        return None
    chunk = data[12:16]
    if chunk == b"VP8X":  # extended: 24-bit width - 1 and height - 1
        return 1 + int.from_bytes(data[24:27], "little"), 1 + int.from_bytes(data[27:30], "little")
    if chunk == b"VP8L" and data[20] == 0x2F:  # lossless: 14-bit width - 1, height - 1
        bits = int.from_bytes(data[21:25], "little")
        return 1 + (bits & 0x3FFF), 1 + ((bits >> 14) & 0x3FFF)
    if chunk == b"VP8 " and data[23:26] == b"\x9d\x01\x2a":  # lossy key frame
        width, height = struct.unpack("<HH", data[26:30])
        return int(width) & 0x3FFF, int(height) & 0x3FFF
    return None


def _jpeg(data: bytes) -> tuple[int, int] | None:
    if data[:2] != b"\xff\xd8":
        return None
    i = 2
    while i + 9 <= len(data):
        if data[i] != 0xFF:
            i += 1
            continue
        marker = data[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
        elif marker in JPEG_STANDALONE:
            i += 2
        elif marker in JPEG_FRAMES:
            height, width = struct.unpack(">HH", data[i + 5 : i + 9])
            return int(width), int(height)
        else:
            (length,) = struct.unpack(">H", data[i + 2 : i + 4])
            i += 2 + int(length)
    return None


def pdf_pages(payload: str) -> int | None:
    """The page count of a base64 PDF: its `/Type /Page` objects, else its page tree's `/Count`
    (page objects packed in compressed object streams are not visible); None when neither shows."""
    if len(payload) > MAX_PDF_CHARS:
        return None
    data = decoded_head(payload, len(payload) + 4)
    if data is None or not data.startswith(b"%PDF"):
        return None
    pages = len(PDF_PAGE.findall(data))
    if pages:
        return pages
    counts = [int(a or b) for a, b in PDF_COUNT.findall(data)]
    return max(counts) if counts else None
