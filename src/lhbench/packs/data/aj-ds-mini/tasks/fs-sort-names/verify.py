import argparse, json, sys
from pathlib import Path
ap = argparse.ArgumentParser(); ap.add_argument("--root", required=True); root = Path(ap.parse_args().root)
def done(ok, detail):
    print(json.dumps({"detail": detail})); sys.exit(0 if ok else 1)
p = root / "sorted.txt"
got = p.read_text().split() if p.exists() else None
done(got == sorted((root / "names.txt").read_text().split()), f"sorted.txt: {got}")
