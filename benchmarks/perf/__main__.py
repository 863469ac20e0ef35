"""``python -m benchmarks.perf``: see :mod:`benchmarks.perf.collect`."""

from benchmarks.perf.collect import main

raise SystemExit(main())
