import argparse, json, sys
from pathlib import Path
ap = argparse.ArgumentParser(); ap.add_argument("--root", required=True); root = Path(ap.parse_args().root)
def done(ok, detail):
    print(json.dumps({"detail": detail})); sys.exit(0 if ok else 1)
names = sorted(p.name for p in root.glob("*.txt"))
done(names == ["2024-01-05_report.txt", "2024-02-29_report.txt", "2024-03-31_report.txt"], f"files: {names}")
