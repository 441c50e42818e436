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
"""

from __future__ import annotations

import json
import math
import wave
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lhbench.envs.content.course import read_course_file
from lhbench.envs.content.errors import SourceError
from lhbench.envs.paths import EscapeError, NotARegularFile, read_beneath

__all__ = [
    "MAX_GAP_S",
    "MAX_TAIL_S",
    "MAX_TOTAL_S",
    "SCENE_CHECKS",
    "VIDEO_DIR",
    "SceneFinding",
    "check_scenes",
]

VIDEO_DIR = "course/video"
MAX_TAIL_S = 1.0
MAX_GAP_S = 1.5
MAX_TOTAL_S = 120.0
SILENCE_DBFS = -40.0
MAX_WAV_BYTES = 64 * 1024 * 1024
SCENE_CHECKS = ("scene_manifest", "narration_fits", "tail_padding", "silent_gap", "video_length")


class _Scene(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(pattern=r"^[A-Za-z0-9_\-]{1,64}$")
    frames: int = Field(ge=1, le=1_000_000)
    narration: str = Field(default="", max_length=20_000)
    audio: str = Field(min_length=1, max_length=300)


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


def check_scenes(root: Path) -> tuple[list[SceneFinding], int]:
    """Findings of every video chapter's scenes in workspace ``root``, and the scene count."""
    findings: list[SceneFinding] = []
    count = 0
    vdir = root / VIDEO_DIR
    if vdir.is_symlink() or not vdir.is_dir():
        return findings, 0
    for chapter in sorted(p.name for p in vdir.iterdir() if p.is_dir() and not p.is_symlink())[
        :100
    ]:
        rel = f"{VIDEO_DIR}/{chapter}/scenes.json"
        try:
            raw = read_course_file(root, rel)
            if raw is None:
                findings.append(SceneFinding("scene_manifest", rel, "missing"))
                continue
            manifest = _Manifest.model_validate(json.loads(raw))
        except (SourceError, ValueError, ValidationError) as exc:
            msg = str(exc).splitlines()[0][:300]
            findings.append(SceneFinding("scene_manifest", rel, f"unreadable: {msg}"))
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
            audio = f"{VIDEO_DIR}/{chapter}/{scene.audio}"
            try:
                data, size = read_beneath(root, audio, limit=MAX_WAV_BYTES + 1)
                if size > MAX_WAV_BYTES:
                    raise ValueError(f"{size} bytes (at most {MAX_WAV_BYTES})")
                seconds, gap = _wav_seconds_and_gap(data)
            except (OSError, EscapeError, NotARegularFile, ValueError, EOFError, wave.Error) as exc:
                findings.append(
                    SceneFinding("scene_manifest", where, f"audio {audio}: {exc}"[:300])
                )
                continue
            need = math.ceil(seconds * fps - 1e-9)
            if scene.frames < need:
                findings.append(
                    SceneFinding(
                        "narration_fits",
                        where,
                        f"narration {seconds:.2f}s needs {need} frames at {fps:g} fps; "
                        f"the scene has {scene.frames}",
                    )
                )
            elif scene.frames - need > math.ceil(MAX_TAIL_S * fps):
                findings.append(
                    SceneFinding(
                        "tail_padding",
                        where,
                        f"{scene.frames - need} frames after the narration ends "
                        f"(at most {math.ceil(MAX_TAIL_S * fps)})",
                    )
                )
            if gap > MAX_GAP_S:
                findings.append(
                    SceneFinding(
                        "silent_gap", where, f"{gap:.2f}s of silence (at most {MAX_GAP_S}s)"
                    )
                )
    return findings, count
