import argparse, json, sys
from pathlib import Path
ap = argparse.ArgumentParser(); ap.add_argument("--root", required=True); root = Path(ap.parse_args().root)
def done(ok, detail):
    print(json.dumps({"detail": detail})); sys.exit(0 if ok else 1)
p = root / "users_clean.csv"
got = p.read_text().splitlines() if p.exists() else None
done(got == ["id,name", "1,ann", "2,bob", "3,cy", "4,dee"], f"users_clean.csv: {got}")
