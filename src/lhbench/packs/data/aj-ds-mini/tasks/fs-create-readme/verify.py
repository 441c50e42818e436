import argparse, json, sys
from pathlib import Path
ap = argparse.ArgumentParser(); ap.add_argument("--root", required=True); root = Path(ap.parse_args().root)
def done(ok, detail):
    print(json.dumps({"detail": detail})); sys.exit(0 if ok else 1)
p = root / "docs" / "README.md"
text = p.read_text() if p.exists() else ""
lines = text.splitlines()
done(bool(lines) and lines[0].strip() == "# Atlas" and any(l.strip() == "## Usage" for l in lines), f"docs/README.md: {lines[:3]}")
