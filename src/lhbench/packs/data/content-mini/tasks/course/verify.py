"""Label: every citation resolves and is supported, every annotated chapter written, slides not checked here."""
import argparse, json, sys
from pathlib import Path

from lhbench.envs.content import SourceError, check_course, load_ground_truth, load_sources

here = Path(__file__).resolve().parent
ap = argparse.ArgumentParser(); ap.add_argument("--root", required=True)
root = Path(ap.parse_args().root)
sources = load_sources(here / "initial" / "context")
gt_file = here.parents[1] / "ground_truth" / here.name / "chapters.json"
gt = load_ground_truth(gt_file) if gt_file.is_file() else None
try:
    report = check_course(root, sources, gt)
except SourceError as exc:  # a symlinked, special or oversized course file: the agent's doing
    print(json.dumps({"detail": f"course file refused: {exc}"}))
    sys.exit(1)
note = "" if gt is not None else " (ground truth not readable: chapters and coverage unchecked)"
print(json.dumps({"detail": report.detail() + note}))
sys.exit(0 if report.passed() else 1)
