"""What a video file the recorder wrote holds, read two ways: by the
containers' own structure, parsed here (MP4: ISO BMFF boxes; WebM: EBML
elements), so that the tests read every file on any machine; and by
ffprobe where it is installed, a reader that is not cugl's.

Each gives a dict: codec ("h264", "vp8" or "vp9"), width, height, frames, and
from ffprobe also pts (each frame's time in seconds, in order)."""
import json
import shutil
import struct
import subprocess


def read(path):
    """The file as the container's structure says (MP4 or WebM, by its first bytes)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] == b"\x1a\x45\xdf\xa3":
        return read_webm(data)
    return read_mp4(data)


# --- MP4 (ISO/IEC 14496-12) --------------------------------------------------------


def mp4_boxes(data, start=0, end=None):
    """(type, payload start, end) of each box from start to end, which they fill."""
    end = len(data) if end is None else end
    at = start
    while at < end:
        size, kind = struct.unpack(">I4s", data[at:at + 8])
        head = 8
        if size == 1:
            size, head = struct.unpack(">Q", data[at + 8:at + 16])[0], 16
        elif size == 0:
            size = end - at
        assert head <= size <= end - at, (kind, size, at, end)
        yield kind.decode("latin-1"), at + head, at + size
        at += size


def mp4_child(data, parent, kind):
    """The one box of `kind` inside `parent` ((start, end) of its payload)."""
    found = [(s, e) for k, s, e in mp4_boxes(data, *parent) if k == kind]
    assert len(found) == 1, (kind, len(found))
    return found[0]


def read_mp4(data):
    top = list(mp4_boxes(data))
    kinds = [k for k, _, _ in top]
    assert kinds[0] == "ftyp", kinds
    assert kinds.count("moov") == 1 and kinds.count("mdat") == 1, kinds
    moov = mp4_child(data, (0, len(data)), "moov")
    traks = [(s, e) for k, s, e in mp4_boxes(data, *moov) if k == "trak"]
    assert len(traks) == 1, "one track"
    stbl = traks[0]
    for kind in ("mdia", "minf", "stbl"):
        stbl = mp4_child(data, stbl, kind)
    # stsd: version and flags, an entry count, then the sample entry: a
    # visual one holds 6 reserved bytes, a data reference index, 16 bytes
    # of zeros, then its width and height.
    stsd = mp4_child(data, stbl, "stsd")
    (count,) = struct.unpack(">I", data[stsd[0] + 4:stsd[0] + 8])
    assert count == 1
    codec, entry, _ = next(mp4_boxes(data, stsd[0] + 8, stsd[1]))
    width, height = struct.unpack(">HH", data[entry + 24:entry + 28])
    # stsz: version and flags, one size for all (0: each its own), the count.
    stsz = mp4_child(data, stbl, "stsz")
    one_size, frames = struct.unpack(">II", data[stsz[0] + 4:stsz[0] + 12])
    sizes = ([one_size] * frames if one_size else
             list(struct.unpack(">%dI" % frames, data[stsz[0] + 12:stsz[0] + 12 + 4 * frames])))
    mdat = [(s, e) for k, s, e in top if k == "mdat"][0]
    assert sum(sizes) == mdat[1] - mdat[0], "the samples fill mdat"
    return {"codec": {"avc1": "h264"}.get(codec, codec), "width": width, "height": height,
            "frames": frames}


# --- WebM (Matroska's EBML) ----------------------------------------------------------

EBML, SEGMENT, CLUSTER, SIMPLE_BLOCK = 0x1A45DFA3, 0x18538067, 0x1F43B675, 0xA3
DOC_TYPE, TRACKS, TRACK_ENTRY, CODEC_ID = 0x4282, 0x1654AE6B, 0xAE, 0x86
VIDEO, PIXEL_WIDTH, PIXEL_HEIGHT = 0xE0, 0xB0, 0xBA
MASTERS = {EBML, SEGMENT, CLUSTER, TRACKS, TRACK_ENTRY, VIDEO}


def ebml_number(data, at, keep_marker):
    """An EBML variable-length number at `at`: (value, where it ends). An
    element ID keeps its length marker; a size does not."""
    first, length = data[at], 1
    while length <= 8 and not first & (0x80 >> (length - 1)):
        length += 1
    assert length <= 8, "no length marker at %d" % at
    value = first if keep_marker else first & (0xFF >> length)
    for b in data[at + 1:at + length]:
        value = value << 8 | b
    return value, at + length


def ebml_elements(data, start=0, end=None):
    """(id, payload start, end) of every element from start to end, which
    they fill, masters' children after their master."""
    end = len(data) if end is None else end
    at = start
    while at < end:
        eid, at = ebml_number(data, at, True)
        size, at = ebml_number(data, at, False)
        assert at + size <= end, (hex(eid), size, at, end)
        yield eid, at, at + size
        if eid in MASTERS:
            yield from ebml_elements(data, at, at + size)
        at += size


def read_webm(data):
    elements = list(ebml_elements(data))
    assert elements[0][0] == EBML

    def only(eid):
        found = [data[s:e] for i, s, e in elements if i == eid]
        assert len(found) == 1, (hex(eid), len(found))
        return found[0]

    assert only(DOC_TYPE) == b"webm"
    return {"codec": {b"V_VP8": "vp8", b"V_VP9": "vp9"}.get(only(CODEC_ID), only(CODEC_ID)),
            "width": int.from_bytes(only(PIXEL_WIDTH), "big"),
            "height": int.from_bytes(only(PIXEL_HEIGHT), "big"),
            "frames": sum(1 for i, _, _ in elements if i == SIMPLE_BLOCK)}


# --- ffprobe ---------------------------------------------------------------------------


def probe(path):
    """The file as ffprobe reads it (every frame decoded and counted), or
    None where ffprobe is not installed."""
    ffprobe = shutil.which("ffprobe")
    if ffprobe is None:
        return None
    out = subprocess.run([ffprobe, "-v", "error", "-count_frames", "-select_streams", "v:0",
                          "-show_entries", "stream=codec_name,width,height,nb_read_frames",
                          "-show_entries", "packet=pts_time", "-of", "json", str(path)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    info = json.loads(out.stdout)
    stream = info["streams"][0]
    return {"codec": stream["codec_name"], "width": stream["width"],
            "height": stream["height"], "frames": int(stream["nb_read_frames"]),
            "pts": sorted(float(p["pts_time"]) for p in info["packets"])}
