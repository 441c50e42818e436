import argparse, json, sys
from pathlib import Path
ap = argparse.ArgumentParser(); ap.add_argument("--root", required=True); root = Path(ap.parse_args().root)
def done(ok, detail):
    print(json.dumps({"detail": detail})); sys.exit(0 if ok else 1)
import configparser
c = configparser.ConfigParser(); c.read(root / "config.ini")
done(c["server"]["port"] == "8080" and c["metrics"]["port"] == "9000", f"server={c['server']['port']} metrics={c['metrics']['port']}")
