"""``python -m trainers train ...`` / ``python -m trainers pull-model``."""

from trainers.cli import main

raise SystemExit(main())
