import argparse, json, sys
from lhbench.envs.checks import sql_rows
ap = argparse.ArgumentParser(); ap.add_argument("--db", required=True); url = ap.parse_args().db
def rows(q): return sql_rows(url, q)
def done(ok, detail):
    print(json.dumps({"detail": detail})); sys.exit(0 if ok else 1)
try:
    got = dict(rows("SELECT id, email_verified FROM users"))
except Exception as exc:
    done(False, f"no email_verified column: {str(exc).splitlines()[0]}")
done(got == {1: 1, 2: 0, 3: 1, 4: 0, 5: 1}, f"email_verified: {got}")
