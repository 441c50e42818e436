"""Run the model stub as its own process: ``python -m lhbench.testing --script mod:attr``.

Prints the base URL on its first line, then serves until killed.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading

from lhbench.testing.stub import FAULTS, ModelStub, load_script


def main() -> None:
    """Parse flags, start the stub, print its base URL, wait for SIGTERM/SIGINT."""
    ap = argparse.ArgumentParser(prog="python -m lhbench.testing", description=__doc__)
    ap.add_argument(
        "--script",
        default="lhbench.testing.scripts:auto_script",
        help="module:attribute of a script (a class or factory is called once); the default "
        "answers every lhbench request in its expected shape",
    )
    ap.add_argument("--latency", type=float, default=0.0)
    ap.add_argument("--fault-rate", type=float, default=0.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--port", type=int, default=0)
    args = ap.parse_args()
    stub = ModelStub(
        load_script(args.script),
        latency=args.latency,
        fault_rate=args.fault_rate,
        faults=FAULTS,
        seed=args.seed,
        port=args.port,
    ).start()
    print(stub.base_url, flush=True)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    signal.signal(signal.SIGINT, lambda *_: done.set())
    done.wait()
    stub.stop()
    sys.exit(0)


if __name__ == "__main__":
    main()
