"""Studies of the writing reward on real text: the data behind its thresholds and sentence-order
check, the reward-hacking probe table, and its agreement with ROUGE-L (and a grader). Each runs as
``python -m benchmarks.writing.<name>``; the writing env pages (docs/envs/writing.md) show their output."""
