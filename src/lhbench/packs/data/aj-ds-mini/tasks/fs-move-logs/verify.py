import argparse, json, sys
from pathlib import Path
ap = argparse.ArgumentParser(); ap.add_argument("--root", required=True); root = Path(ap.parse_args().root)
def done(ok, detail):
    print(json.dumps({"detail": detail})); sys.exit(0 if ok else 1)
moved = sorted(p.name for p in (root / "logs").glob("*.log"))
left = sorted(p.name for p in root.glob("*.log"))
done(moved == ["a.log", "b.log", "c.log"] and not left and (root / "notes.txt").exists(), f"in logs/: {moved}; left: {left}")
