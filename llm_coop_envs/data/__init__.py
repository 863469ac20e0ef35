"""Dataset loading: an explicit file, a local data directory, or the Hugging Face Hub."""

from llm_coop_envs.data.loading import DATASETS, DataNotFoundError, DatasetSource, load_rows, read_rows
from llm_coop_envs.data.splits import SPLITS, select_split

__all__ = ["DATASETS", "DataNotFoundError", "DatasetSource", "SPLITS", "load_rows", "read_rows", "select_split"]
