"""Per-scene audio/video timing of a video chapter, from its scene manifest.

A container-level A/V comparison always passes (renderers pad audio to the composition's
length), so the useful check is per scene. A video chapter ships
``course/video/<chapter>/scenes.json``::

    {"fps": 15, "scenes": [{"id": "intro", "frames": 150, "narration": "...",
                            "audio": "audio/intro.wav"}, ...]}

For each scene, with the narration's duration read from its WAV header (Python's
``wave``: no ffprobe needed): the narration fits (``ceil(seconds * fps) <= frames``),
the tail after it is bounded (``frames - needed <= ceil(MAX_TAIL_S * fps)``), and the
narration has no silent gap longer than ``MAX_GAP_S`` (16-bit PCM, RMS per 50 ms window
under ``SILENCE_DBFS``). The chapter is at most ``MAX_TOTAL_S`` long. A manifest or
audio file that cannot be read is a finding, never an exception: it is agent output.

Rendered scenes (``"video": "render/intro.mp4"`` on a scene) are measured with
ffprobe/ffmpeg when they are on PATH (:func:`measure_scenes`, in the sandbox: the files
are copied out of the workspace without following links, and the untrusted media is only
parsed by a sandboxed process). Then the scene's length is the rendered file's (video
packets / frame rate), a manifest that disagrees with it by more than a frame is a
``scene_render`` finding, the narration's length is ffprobe's, and gaps are the
``silencedetect`` silences of the rendered audio inside the narration (the tail after it
is bounded by ``tail_padding``).
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import wave
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lhbench.envs.content.course import read_course_file
from lhbench.envs.content.errors import SourceError
from lhbench.envs.content.worker import run_worker
from lhbench.envs.paths import EscapeError, NotARegularFile, open_beneath, read_beneath
from lhbench.sandbox import Limits, Sandbox, policy_for

__all__ = [
    "MAX_GAP_S",
    "MAX_TAIL_S",
    "MAX_TOTAL_S",
    "MAX_VIDEO_BYTES",
    "SCENE_CHECKS",
    "VIDEO_DIR",
    "SceneFinding",
    "SceneMedia",
    "check_scenes",
    "ffmpeg_available",
    "measure_scenes",
    "rendered_scenes",
]

VIDEO_DIR = "course/video"
MAX_TAIL_S = 1.0
MAX_GAP_S = 1.5
MAX_TOTAL_S = 120.0
SILENCE_DBFS = -40.0
MAX_WAV_BYTES = 64 * 1024 * 1024
MAX_VIDEO_BYTES = 256 * 1024 * 1024
SCENE_CHECKS = (
    "scene_manifest",
    "scene_render",
    "narration_fits",
    "tail_padding",
    "silent_gap",
    "video_length",
)


class _Scene(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(pattern=r"^[A-Za-z0-9_\-]{1,64}$")
    frames: int = Field(ge=1, le=1_000_000)
    narration: str = Field(default="", max_length=20_000)
    audio: str = Field(min_length=1, max_length=300)
    video: str | None = Field(default=None, min_length=1, max_length=300)


class _Manifest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    fps: float = Field(gt=0, le=240)
    scenes: list[_Scene] = Field(min_length=1, max_length=500)


@dataclass(frozen=True)
class SceneFinding:
    """A failed scene check: which, where, and the measured numbers."""

    check: str
    where: str
    message: str


def _wav_seconds_and_gap(data: bytes) -> tuple[float, float]:
    """(duration, longest silent run in seconds) of a WAV file's bytes."""
    import io

    with wave.open(io.BytesIO(data)) as w:
        rate, n, width, channels = (
            w.getframerate(),
            w.getnframes(),
            w.getsampwidth(),
            w.getnchannels(),
        )
        if rate <= 0:
            raise ValueError("sample rate 0")
        frames = w.readframes(n)
    seconds = n / rate
    if width != 2:
        return seconds, 0.0  # silence measured on 16-bit PCM only
    samples = np.frombuffer(frames, dtype="<i2").astype(np.float64)
    if channels > 1:
        samples = (
            samples[: len(samples) - len(samples) % channels].reshape(-1, channels).mean(axis=1)
        )
    win = max(1, int(rate * 0.05))
    usable = len(samples) - len(samples) % win
    if usable == 0:
        return seconds, seconds
    rms = np.sqrt(np.mean(samples[:usable].reshape(-1, win) ** 2, axis=1)) / 32768.0
    silent = 20 * np.log10(np.maximum(rms, 1e-9)) < SILENCE_DBFS
    longest = run = 0
    for s in silent:
        run = run + 1 if s else 0
        longest = max(longest, run)
    return seconds, longest * win / rate


@dataclass(frozen=True)
class SceneMedia:
    """What ffprobe/ffmpeg measured of one rendered scene (``error`` when it could not)."""

    frames: int | None = None
    fps: float | None = None
    narration_s: float | None = None
    silences: tuple[tuple[float, float], ...] = ()
    audio_streams: int = 0
    error: str | None = None


def ffmpeg_available() -> bool:
    """Whether both ffprobe and ffmpeg are on PATH."""
    return shutil.which("ffprobe") is not None and shutil.which("ffmpeg") is not None


def _manifests(root: Path) -> list[tuple[str, str, _Manifest | str]]:
    """(chapter, manifest path, manifest or why it is unreadable), bounded, no link followed."""
    out: list[tuple[str, str, _Manifest | str]] = []
    vdir = root / VIDEO_DIR
    if vdir.is_symlink() or not vdir.is_dir():
        return out
    chapters = sorted(p.name for p in vdir.iterdir() if p.is_dir() and not p.is_symlink())
    for chapter in chapters[:100]:
        rel = f"{VIDEO_DIR}/{chapter}/scenes.json"
        try:
            raw = read_course_file(root, rel)
            if raw is None:
                out.append((chapter, rel, "missing"))
                continue
            out.append((chapter, rel, _Manifest.model_validate(json.loads(raw))))
        except (SourceError, ValueError, ValidationError) as exc:
            out.append((chapter, rel, "unreadable: " + str(exc).splitlines()[0][:300]))
    return out


def rendered_scenes(root: Path) -> list[str]:
    """``where`` of every scene whose manifest names a rendered file."""
    return [
        f"{rel}#{scene.id}"
        for _chapter, rel, manifest in _manifests(root)
        if not isinstance(manifest, str)
        for scene in manifest.scenes
        if scene.video is not None
    ]


def _copy_out(root: Path, rel: str, dest: Path, limit: int) -> None:
    """Copy ``root/rel`` to ``dest`` without following links; ValueError when too big."""
    fd = open_beneath(root, rel)
    try:
        if os.fstat(fd).st_size > limit:
            raise ValueError(f"{os.fstat(fd).st_size} bytes (at most {limit})")
        with dest.open("wb") as f:
            copied = 0
            while chunk := os.read(fd, 1 << 20):
                copied += len(chunk)
                if copied > limit:
                    raise ValueError(f"more than {limit} bytes")
                f.write(chunk)
    finally:
        os.close(fd)


def measure_scenes(
    root: Path, sandbox: Sandbox | None, *, timeout: float = 180.0
) -> dict[str, SceneMedia]:
    """ffprobe/ffmpeg measurements of every rendered scene (``where`` -> media), in the sandbox.

    ``sandbox=None`` is for a caller already inside lhbench's sandbox. A scene whose files
    cannot be copied or parsed gets a :class:`SceneMedia` with ``error``.

    Raises:
        RuntimeError: ffprobe/ffmpeg are missing, or the measuring process crashed or
            timed out.
        ValueError: ``sandbox`` is None outside the sandbox.
    """
    if sandbox is None and os.environ.get("LHBENCH_IN_SANDBOX") != "1":
        raise ValueError("measure_scenes needs a sandbox unless it already runs inside one")
    if not ffmpeg_available():
        raise RuntimeError("ffprobe/ffmpeg are not on PATH (Debian: apt-get install ffmpeg)")
    out: dict[str, SceneMedia] = {}
    with tempfile.TemporaryDirectory(prefix="lhbench-scenes-") as tmp:
        work = Path(tmp)
        (work / "in").mkdir()
        plan: list[dict[str, str]] = []
        for chapter, rel, manifest in _manifests(root):
            if isinstance(manifest, str):
                continue
            for scene in manifest.scenes:
                if scene.video is None:
                    continue
                where = f"{rel}#{scene.id}"
                n = len(plan)
                item = {"where": where, "video": f"in/{n}.video", "audio": f"in/{n}.audio"}
                try:
                    _copy_out(
                        root,
                        f"{VIDEO_DIR}/{chapter}/{scene.video}",
                        work / item["video"],
                        MAX_VIDEO_BYTES,
                    )
                    _copy_out(
                        root,
                        f"{VIDEO_DIR}/{chapter}/{scene.audio}",
                        work / item["audio"],
                        MAX_WAV_BYTES,
                    )
                except (OSError, EscapeError, NotARegularFile, ValueError) as exc:
                    out[where] = SceneMedia(error=f"{type(exc).__name__}: {exc}"[:300])
                    continue
                plan.append(item)
        if not plan:
            return out
        (work / "plan.json").write_text(json.dumps(plan), encoding="utf-8")
        argv = [sys.executable, "-I", "-m", "lhbench.envs.content.scenes", str(work / "plan.json")]
        policy = (
            policy_for(
                work,
                writable=[work],
                env={"LHBENCH_IN_SANDBOX": "1"},
                limits=Limits(wall_s=timeout, cpu_s=int(timeout) * 2, memory_mb=2048, file_mb=64),
                name="lhbench-scenes",
            )
            if sandbox is not None
            else None
        )
        measured = run_worker(
            argv,
            sandbox=sandbox,
            policy=policy,
            timeout=timeout,
            result=work / "media.json",
            what="scene measurement",
        )
        for where, m in measured.items():
            out[where] = SceneMedia(
                frames=m.get("frames"),
                fps=m.get("fps"),
                narration_s=m.get("narration_s"),
                silences=tuple((float(a), float(b)) for a, b in m.get("silences", [])),
                audio_streams=int(m.get("audio_streams", 0)),
                error=m.get("error"),
            )
    return out


def check_scenes(
    root: Path, media: Mapping[str, SceneMedia] | None = None
) -> tuple[list[SceneFinding], int]:
    """Findings of every video chapter's scenes in workspace ``root``, and the scene count.

    ``media``: ffprobe measurements of rendered scenes (:func:`measure_scenes`); a scene
    measured there is timed from its rendered file, the others from the manifest and WAV.
    """
    findings: list[SceneFinding] = []
    count = 0
    for chapter, rel, manifest in _manifests(root):
        if isinstance(manifest, str):
            findings.append(SceneFinding("scene_manifest", rel, manifest))
            continue
        fps = manifest.fps
        total = sum(s.frames for s in manifest.scenes)
        if total / fps > MAX_TOTAL_S:
            findings.append(
                SceneFinding("video_length", rel, f"{total / fps:.1f}s (at most {MAX_TOTAL_S:g}s)")
            )
        for scene in manifest.scenes:
            count += 1
            where = f"{rel}#{scene.id}"
            measured = (media or {}).get(where) if scene.video is not None else None
            if measured is not None:
                timing = _rendered_timing(where, scene, fps, measured, findings)
                if timing is None:
                    continue
                seconds, gap, frames = timing
            else:
                audio = f"{VIDEO_DIR}/{chapter}/{scene.audio}"
                try:
                    data, size = read_beneath(root, audio, limit=MAX_WAV_BYTES + 1)
                    if size > MAX_WAV_BYTES:
                        raise ValueError(f"{size} bytes (at most {MAX_WAV_BYTES})")
                    seconds, gap = _wav_seconds_and_gap(data)
                except (
                    OSError,
                    EscapeError,
                    NotARegularFile,
                    ValueError,
                    EOFError,
                    wave.Error,
                ) as exc:
                    findings.append(
                        SceneFinding("scene_manifest", where, f"audio {audio}: {exc}"[:300])
                    )
                    continue
                frames = scene.frames
            _timing_findings(where, seconds, gap, frames, fps, findings)
    return findings, count


def _rendered_timing(
    where: str, scene: _Scene, fps: float, m: SceneMedia, findings: list[SceneFinding]
) -> tuple[float, float, int] | None:
    """(narration seconds, longest gap, rendered frames) of a measured scene, or None."""
    if m.error or m.frames is None or m.narration_s is None:
        findings.append(
            SceneFinding(
                "scene_render",
                where,
                f"rendered scene {scene.video}: {m.error or 'no video stream'}"[:300],
            )
        )
        return None
    if m.fps and abs(m.fps - fps) > 0.01:
        findings.append(
            SceneFinding(
                "scene_render", where, f"rendered at {m.fps:g} fps; the manifest says {fps:g}"
            )
        )
    if abs(m.frames - scene.frames) > 1:
        findings.append(
            SceneFinding(
                "scene_render",
                where,
                f"the rendered scene has {m.frames} frames ({m.frames / fps:.2f}s); "
                f"the manifest says {scene.frames}",
            )
        )
    if m.audio_streams == 0:
        findings.append(SceneFinding("scene_render", where, "the rendered scene has no audio"))
    # gaps inside the narration only: the tail after it is the tail_padding check's
    gap = 0.0
    for start, end in m.silences:
        if start < m.narration_s - 0.05:
            gap = max(gap, min(end, m.narration_s) - max(start, 0.0))
    return m.narration_s, gap, m.frames


def _timing_findings(
    where: str, seconds: float, gap: float, frames: int, fps: float, findings: list[SceneFinding]
) -> None:
    need = math.ceil(seconds * fps - 1e-9)
    if frames < need:
        findings.append(
            SceneFinding(
                "narration_fits",
                where,
                f"narration {seconds:.2f}s needs {need} frames at {fps:g} fps; "
                f"the scene has {frames}",
            )
        )
    elif frames - need > math.ceil(MAX_TAIL_S * fps):
        findings.append(
            SceneFinding(
                "tail_padding",
                where,
                f"{frames - need} frames after the narration ends "
                f"(at most {math.ceil(MAX_TAIL_S * fps)})",
            )
        )
    if gap > MAX_GAP_S:
        findings.append(
            SceneFinding("silent_gap", where, f"{gap:.2f}s of silence (at most {MAX_GAP_S}s)")
        )


# -- the measuring process (runs in the sandbox, on copies of the media) -------------------

_SILENCE = re.compile(r"silence_(start|end): (-?[0-9.]+)")
_SILENCE_MIN_S = 0.3


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)


def _probe(path: Path, *, count: bool) -> dict[str, object]:
    argv = ["ffprobe", "-v", "error", "-of", "json", "-show_entries"]
    argv.append("stream=codec_type,r_frame_rate,nb_read_packets:format=duration")
    if count:
        argv.append("-count_packets")
    done = _run([*argv, str(path)])
    if done.returncode != 0:
        raise ValueError(f"ffprobe: {done.stderr.strip()[:200] or 'not a media file'}")
    doc: dict[str, object] = json.loads(done.stdout or "{}")
    return doc


def _silences(path: Path, duration: float) -> list[tuple[float, float]]:
    done = _run(
        [
            "ffmpeg", "-hide_banner", "-nostats", "-i", str(path), "-map", "0:a:0",
            "-af", f"silencedetect=n={SILENCE_DBFS:g}dB:d={_SILENCE_MIN_S}", "-f", "null", "-",
        ]
    )  # fmt: skip
    if done.returncode != 0:
        raise ValueError(f"ffmpeg silencedetect: {done.stderr.strip().splitlines()[-1:]}")
    out, start = [], None
    for kind, value in _SILENCE.findall(done.stderr):
        if kind == "start":
            start = max(0.0, float(value))
        elif start is not None:
            out.append((start, float(value)))
            start = None
    if start is not None:  # silent to the end
        out.append((start, duration))
    return out


def _measure(work: Path, item: dict[str, str]) -> dict[str, object]:
    video = _probe(work / item["video"], count=True)
    raw = video.get("streams")
    streams = [s for s in raw if isinstance(s, dict)] if isinstance(raw, list) else []
    vstreams = [s for s in streams if s.get("codec_type") == "video"]
    astreams = [s for s in streams if s.get("codec_type") == "audio"]
    if not vstreams:
        return {"error": "no video stream", "audio_streams": len(astreams)}
    num, _, den = str(vstreams[0].get("r_frame_rate", "0/1")).partition("/")
    fps = float(num) / float(den or 1) if float(den or 1) else 0.0
    frames = int(vstreams[0].get("nb_read_packets") or 0)
    audio = _probe(work / item["audio"], count=False)
    fmt = audio.get("format")
    narration = float(fmt.get("duration") or 0.0) if isinstance(fmt, dict) else 0.0
    # what the viewer hears: the rendered audio, else the narration file
    heard = work / (item["video"] if astreams else item["audio"])
    length = frames / fps if fps else narration
    return {
        "frames": frames,
        "fps": fps,
        "narration_s": narration,
        "audio_streams": len(astreams),
        "silences": _silences(heard, max(length, narration)),
    }


def main(argv: list[str] | None = None) -> int:
    """``python -m lhbench.envs.content.scenes PLAN.json``: measure, write media.json beside it."""
    args = list(sys.argv[1:] if argv is None else argv)
    plan_file = Path(args[0])
    work = plan_file.parent
    result: dict[str, dict[str, object]] = {}
    for item in json.loads(plan_file.read_text(encoding="utf-8")):
        try:
            result[item["where"]] = _measure(work, item)
        except (ValueError, OSError, subprocess.TimeoutExpired) as exc:
            result[item["where"]] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
    (work / "media.json").write_text(json.dumps(result), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
