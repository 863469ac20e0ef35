"""The environment core shared by every task: the PettingZoo env, text spaces, rewards, tasks."""

from llm_coop_envs.core.env import CoopEnv
from llm_coop_envs.core.reward import RewardResult
from llm_coop_envs.core.reward_fns import RewardFn, batched_reward
from llm_coop_envs.core.spaces import UnicodeText
from llm_coop_envs.core.task import Evaluation, Task

__all__ = ["CoopEnv", "Evaluation", "RewardFn", "RewardResult", "Task", "UnicodeText", "batched_reward"]
