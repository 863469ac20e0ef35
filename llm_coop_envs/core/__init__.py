"""The environment core shared by every task: the PettingZoo env, text spaces, rewards, tasks."""

from llm_coop_envs.core.env import CoopEnv
from llm_coop_envs.core.reward import RewardResult
from llm_coop_envs.core.reward_fns import RewardFn, batched_reward
from llm_coop_envs.core.runner import EpisodeResult, Request, Step, run_episode, run_episodes
from llm_coop_envs.core.spaces import UnicodeText
from llm_coop_envs.core.task import Evaluation, Task

__all__ = [
    "CoopEnv", "EpisodeResult", "Evaluation", "Request", "RewardFn", "RewardResult", "Step", "Task", "UnicodeText",
    "batched_reward", "run_episode", "run_episodes",
]
