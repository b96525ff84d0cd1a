"""Runs a command; prints its exit status (or signal) and the children's peak RSS."""

import resource
import subprocess
import sys
import time

t = time.time()
p = subprocess.run(sys.argv[1:])
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(
    f"[rsswrap] rc={p.returncode} peak_rss_MiB={rss // 1024} secs={time.time() - t:.1f}", flush=True
)
