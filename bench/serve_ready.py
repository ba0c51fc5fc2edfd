"""How soon `kg serve` answers on a built store: seconds to the first /health, then a few first calls.

    python bench/serve_ready.py STORE_DIR [--port 8765]

The first search sent while the background thread still builds the indexes waits for them; the figure
shows how long.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
import urllib.request


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("store", help="a store directory built by `kg build`")
    ap.add_argument("--port", type=int, default=8765)
    args = ap.parse_args()
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "kg", "serve", "--store-dir", args.store, "--port", str(args.port)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def get(path: str) -> float:
        t = time.perf_counter()
        urllib.request.urlopen(f"http://127.0.0.1:{args.port}{path}", timeout=120).read()
        return time.perf_counter() - t

    try:
        while True:
            try:
                get("/health")
                break
            except OSError:
                if proc.poll() is not None:
                    sys.exit(f"kg serve exited: {proc.stdout.read() if proc.stdout else ''}")
                time.sleep(0.05)
        print(f"/health answered            {time.perf_counter() - t0:6.1f} s after start")
        print(f"/stats                      {get('/stats'):6.2f} s")
        print(f"first /search (indexes)     {get('/search?q=graph%20neural%20network'):6.2f} s")
        print(f"second /search              {get('/search?q=diffusion%20model'):6.2f} s")
        print(f"/papers?q=                  {get('/papers?q=graph%20neural&limit=5'):6.2f} s")
    finally:
        proc.terminate()
        proc.wait()


if __name__ == "__main__":
    main()
