"""Per-scene A/V timing from a scene manifest: real WAV files, each failure exactly its check."""

from __future__ import annotations

import json
import wave
from pathlib import Path

import numpy as np

from lhbench.envs.content import GroundTruth, SourceSet, check_course
from lhbench.envs.content.scenes import check_scenes

RATE = 22_050
FPS = 15


def _wav(path: Path, *parts: tuple[str, float]) -> None:
    """A 16-bit mono WAV of ("tone"|"silence", seconds) parts (a stand-in for TTS narration)."""
    chunks = []
    for kind, seconds in parts:
        n = int(RATE * seconds)
        t = np.arange(n) / RATE
        amp = 0.3 if kind == "tone" else 0.0
        chunks.append(amp * np.sin(2 * np.pi * 220 * t))
    pcm = (np.concatenate(chunks) * 32767).astype("<i2")
    path.parent.mkdir(parents=True, exist_ok=True)
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(pcm.tobytes())


def _video(
    root: Path, chapter: str, scenes: list[tuple[str, int, list[tuple[str, float]]]]
) -> None:
    d = root / "course/video" / chapter
    manifest = {"fps": FPS, "scenes": []}
    for sid, frames, audio in scenes:
        _wav(d / f"audio/{sid}.wav", *audio)
        manifest["scenes"].append(  # type: ignore[attr-defined]
            {"id": sid, "frames": frames, "narration": f"scene {sid}", "audio": f"audio/{sid}.wav"}
        )
    d.mkdir(parents=True, exist_ok=True)
    (d / "scenes.json").write_text(json.dumps(manifest))


def test_scenes_whose_narration_fits_pass(
    course: Path, sources: SourceSet, ground_truth: GroundTruth
) -> None:
    # 4.0 s of narration needs exactly 60 frames at 15 fps; a 10-frame tail is allowed
    _video(course, "efficiency", [("a", 60, [("tone", 4.0)]), ("b", 85, [("tone", 5.0)])])
    report = check_course(course, sources, ground_truth)
    assert report.findings == [] and report.scenes == 2
    assert report.scene_share() == 1.0


def test_a_scene_whose_narration_outruns_it_fails_exactly_narration_fits(
    course: Path, sources: SourceSet, ground_truth: GroundTruth
) -> None:
    _video(course, "efficiency", [("a", 60, [("tone", 4.0)]), ("b", 45, [("tone", 4.0)])])
    report = check_course(course, sources, ground_truth)
    assert report.failed_checks() == {"narration_fits"}
    [f] = report.findings
    assert f.where == "course/video/efficiency/scenes.json#b"
    assert "needs 60 frames" in f.message and "has 45" in f.message
    assert report.scene_share() == 0.5


def test_dead_air_and_silent_gaps_are_their_own_checks(tmp_path: Path) -> None:
    _video(
        tmp_path,
        "ch",
        [
            ("tail", 60, [("tone", 1.0)]),  # 45 frames after a 1 s narration
            ("gap", 75, [("tone", 1.0), ("silence", 2.5), ("tone", 1.0)]),
        ],
    )
    findings, n = check_scenes(tmp_path)
    assert n == 2
    assert sorted((f.check, f.where.rsplit("#", 1)[1]) for f in findings) == [
        ("silent_gap", "gap"),
        ("tail_padding", "tail"),
    ]


def test_a_video_over_two_minutes_fails_video_length(tmp_path: Path) -> None:
    _video(tmp_path, "ch", [("long", 1900, [("tone", 126.0)])])
    findings, _ = check_scenes(tmp_path)
    assert [f.check for f in findings] == ["video_length"]


def test_bad_manifests_and_audio_are_findings_not_crashes(tmp_path: Path) -> None:
    d = tmp_path / "course/video"
    (d / "a").mkdir(parents=True)
    (d / "a/scenes.json").write_text("{not json")
    (d / "b").mkdir()
    (d / "b/scenes.json").write_text(json.dumps({"fps": 15, "scenes": [{"id": "x", "frames": 10}]}))
    (d / "c/audio").mkdir(parents=True)
    (d / "c/audio/x.wav").write_bytes(b"RIFF\x00\x00\x00\x00WAVEjunk")
    (d / "c/scenes.json").write_text(
        json.dumps({"fps": 15, "scenes": [{"id": "x", "frames": 10, "audio": "audio/x.wav"}]})
    )
    (d / "e").mkdir()
    (d / "e/scenes.json").write_text(
        json.dumps(
            {"fps": 15, "scenes": [{"id": "x", "frames": 10, "audio": "../../../../etc/passwd"}]}
        )
    )
    (d / "f/audio").mkdir(parents=True)
    (d / "f/audio/x.wav").symlink_to("/etc/hostname")
    (d / "f/scenes.json").write_text(
        json.dumps({"fps": 15, "scenes": [{"id": "x", "frames": 10, "audio": "audio/x.wav"}]})
    )
    findings, _ = check_scenes(tmp_path)
    assert [(f.check, f.where.split("/")[2]) for f in findings] == [
        ("scene_manifest", "a"),
        ("scene_manifest", "b"),
        ("scene_manifest", "c"),
        ("scene_manifest", "e"),
        ("scene_manifest", "f"),
    ]
