"""Label: test_stats.py passes and is unchanged."""
import argparse, hashlib, json, subprocess, sys
from pathlib import Path

ap = argparse.ArgumentParser(); ap.add_argument("--root", required=True)
root = Path(ap.parse_args().root)
def done(ok, detail):
    print(json.dumps({"detail": detail})); sys.exit(0 if ok else 1)
TEST_SHA256 = "57707b2e82d55f1a8b8f97dbd3fdcbce5c221de2a226f34c8013aed25ba10378"
test = root / "test_stats.py"
if not test.is_file() or hashlib.sha256(test.read_bytes()).hexdigest() != TEST_SHA256:
    done(False, "test_stats.py was changed or removed")
proc = subprocess.run([sys.executable, "test_stats.py"], cwd=root, capture_output=True, text=True, timeout=30)
done(proc.returncode == 0, "test passes" if proc.returncode == 0 else (proc.stderr.strip().splitlines() or ["test fails"])[-1])
