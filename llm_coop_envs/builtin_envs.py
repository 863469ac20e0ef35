"""The environments that ship with the package. Each entry point's module docstring is its doc page, with
the version history; each module's ``env`` builds its current version, ``env_v<N>`` an older one; an
old version that is no longer registered (``mbpp-v0``) raises an error naming the current id."""

from llm_coop_envs.registration import register

register("coop_humaneval-v0", "llm_coop_envs.coding.coop_humaneval:env_v0")
register("coop_basics-v0", "llm_coop_envs.coding.coop_basics:env_v0")
register("humaneval-v0", "llm_coop_envs.coding.humaneval:env_v0")
register("coop_humaneval-v1", "llm_coop_envs.coding.coop_humaneval:env_v1")
register("coop_basics-v1", "llm_coop_envs.coding.coop_basics:env_v1")
register("humaneval-v1", "llm_coop_envs.coding.humaneval:env_v1")
register("mbpp-v1", "llm_coop_envs.coding.mbpp:env_v1")
register("coop_procedural-v0", "llm_coop_envs.coding.procedural.env:env_v0")
register("coop_humaneval-v2", "llm_coop_envs.coding.coop_humaneval:env")
register("coop_basics-v2", "llm_coop_envs.coding.coop_basics:env")
register("humaneval-v2", "llm_coop_envs.coding.humaneval:env")
register("mbpp-v2", "llm_coop_envs.coding.mbpp:env")
register("coop_procedural-v1", "llm_coop_envs.coding.procedural.env:env")
register("tldr-v0", "llm_coop_envs.writing.tldr:env_v0")
register("tldr-v1", "llm_coop_envs.writing.tldr:env_v1")
register("arxiv_intro-v0", "llm_coop_envs.writing.arxiv_intro:env_v0")
register("arxiv_intro-v1", "llm_coop_envs.writing.arxiv_intro:env_v1")
register("tldr-v2", "llm_coop_envs.writing.tldr:env_v2")
register("arxiv_intro-v2", "llm_coop_envs.writing.arxiv_intro:env_v2")
register("tldr-v3", "llm_coop_envs.writing.tldr:env_v3")
register("arxiv_intro-v3", "llm_coop_envs.writing.arxiv_intro:env_v3")
register("tldr-v4", "llm_coop_envs.writing.tldr:env_v4")
register("arxiv_intro-v4", "llm_coop_envs.writing.arxiv_intro:env_v4")
register("tldr-v5", "llm_coop_envs.writing.tldr:env")
register("arxiv_intro-v5", "llm_coop_envs.writing.arxiv_intro:env")
