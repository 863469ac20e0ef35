"""``llm-coop bench``: algorithms x seeds at an equal budget, held-out curves, means with bootstrap CIs.

``plan`` builds the trainer commands, ``runner`` executes them one at a time, ``records`` reads the
run folders, ``bootstrap`` and ``aggregate`` turn records into numbers, ``report`` writes the files.
"""
