"""Reports: a markdown table like the papers', the results JSON, and PNG plots."""

from benchmarks.reporting.files import write_report
from benchmarks.reporting.plots import plot_learning_curves, plot_pass_at_k
from benchmarks.reporting.table import markdown_table

__all__ = ["markdown_table", "plot_learning_curves", "plot_pass_at_k", "write_report"]
