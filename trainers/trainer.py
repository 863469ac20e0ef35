"""The training loop, top to bottom: roll out trees of joint samples, score advantages, update agents.

    >>> from trainers import Trainer, load_config
    >>> trainer = Trainer(load_config(preset="cpu-demo"))
    >>> history = trainer.train()

One step:

1. ``problems_per_step`` fresh episodes (``env.reset(seed=...)`` on copies of the env; sharded
   weights are gathered for the rollout);
2. :func:`~trainers.rollout.grow_trees`: every acting agent samples G replies (one batched generate
   call per tree level), joint samples are stepped on env copies in parallel, multi-turn episodes
   branch into trees, returns are discounted up the tree;
3. the algorithm turns each sibling group into advantages;
4. per agent (each reply a :class:`~trainers.train_items.TrainItem`, weighted by
   :func:`~trainers.train_items.reply_weights`): token log-probs of its own replies under its own observation, the algorithm's loss,
   backward (micro-batched), one bucketed gradient all-reduce across processes (DDP through
   Accelerate, :mod:`trainers.distributed`; under FSDP2 a reduce-scatter into each process's shard,
   :mod:`trainers.fsdp`), clip, AdamW step: once per pass over the rollout, or once per minibatch
   when the algorithm sets ``minibatch_size`` (``updates_per_rollout`` passes);
5. metrics (:mod:`trainers.step_metrics`, reduced across processes once per step), transcripts, held-out evaluations
   (``eval_problems``: at step 0, every ``eval_every`` steps, after the last step) and (every
   ``save_every`` steps and at the end) a checkpoint.

A checkpoint is written only between steps, so it always holds a whole step: all agents' weights and
optimizers, the step counter and every rank's RNG states. Ctrl-C finishes the step in flight, saves and
stops (a second Ctrl-C stops at once, without saving); a killed process resumes from its last
checkpoint (``resume=true``) and repeats exactly what an uninterrupted run does from there.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import json
import math
import signal
import threading
import time
import warnings
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import torch

from trainers import distributed
from trainers.algorithms.base import Algorithm, Capabilities, LossBatch, advantage_table, advantage_tensor
from trainers.algorithms.options import build_algorithm, update_schedule
from trainers.checkpoint import latest_checkpoint, register_weight_hooks, restore_checkpoint, save_checkpoint
from trainers.config import TrainConfig
from trainers.draws import problem_seed
from trainers.phases import env_kwargs_at, parse_phases, phase_index
from trainers.distributed import Distributed
from trainers.evaluate import EvalResult, evaluate, make_eval_env
from trainers.generation import GenerationRequest, backend_from_config
from trainers.metrics_log import METRICS_FILE, SAMPLES_FILE, MetricsLogger, read_jsonl, read_metrics
from trainers.policy import build_policies
from trainers.provenance import config_provenance, write_provenance
from trainers.rollout import Group, grow_trees, root_node
from trainers.threads import fit_threads
from trainers.run_folder import prepare_run_folder, record_start, trim_jsonl
from trainers.step_metrics import (approx_kl_sum, clip_counts, item_metrics, merge_rank_metrics, reward_records,
                                   sampler_gap)
from trainers.train_items import (TrainItem, clip_gradients, depth_counts, importance_weights, item_totals,
                                  reply_weights, rescaled, sampler_logps, train_item)


class Trainer:
    """Trains every agent of ``cfg.env`` with ``cfg.algo``. Pass ``env``, ``models`` or ``algorithm``
    to use ready objects instead of building them from the config (tests, notebooks, custom setups),
    ``eval_env`` for the held-out env of ``eval_problems``, and ``backend`` (a function of the built
    policies that returns a generation backend) to generate with a backend of your own."""

    def __init__(
        self,
        cfg: TrainConfig,
        *,
        env: Any = None,
        models: Any = None,
        algorithm: Algorithm | None = None,
        eval_env: Any = None,
        backend: Callable[[Any], Any] | None = None,
    ) -> None:
        self.cfg = cfg
        self.accelerator = distributed.make_accelerator(cfg.device)
        self.dist = Distributed.of(self.accelerator)
        self.run_dir = prepare_run_folder(
            cfg.run_dir, cfg.run_name, cfg.algo, resume=cfg.resume, overwrite=cfg.overwrite, clear=self.dist.is_main
        )
        self.env = env if env is not None else _make_env(cfg.env, cfg.env_kwargs)
        self.phases = parse_phases(cfg.phases)
        self._phase_envs = {None: self.env}  # made on entering a phase; checked at start (below)
        self.eval_env = _held_out_env(cfg, env, eval_env)
        self.agents = tuple(self.env.possible_agents)
        for step in sorted({phase.from_step for phase in self.phases}):
            _check_same_agents(self.env_at(step), self.agents, step)
        self.algorithm = algorithm if algorithm is not None else build_algorithm(cfg)
        self.capabilities = Capabilities.of(self.algorithm)
        """What the trainer reads from the algorithm besides advantages() and loss(), read once here."""
        self.loss_options = self.capabilities.loss_options
        self.minibatch_size, self.updates_per_rollout = update_schedule(self.capabilities, cfg)
        _check_single_agent(self.capabilities, self.agents, cfg)
        device = self.accelerator.device if cfg.device == "auto" else None
        self.policies = build_policies(self.agents, cfg, models, device=device,
                                       keep_reference=self.loss_options.kl_coef > 0)
        self.backend = backend(self.policies) if backend is not None else backend_from_config(cfg, self.policies)

        def make_optimizer(key: str) -> torch.optim.Optimizer:  # after sharding, when the engine shards
            params = list(self.policies.named_trainable(key).values())
            return torch.optim.AdamW(params, lr=cfg.learning_rate, weight_decay=cfg.weight_decay)

        modules, self.optimizers = distributed.prepare(self.accelerator, self.policies, make_optimizer)
        self.policies.training_modules = modules
        self.owned_modules, self.owned_optimizers = distributed.prepare_owned(
            self.accelerator, self.algorithm, self.capabilities.build_modules, self.policies)
        """The algorithm's own modules (``build_modules``) as prepared, and their optimizers, by name."""
        register_weight_hooks(self.accelerator, self.policies, self.owned_modules, self.optimizers)
        self.step = 0
        self._saved_step: int | None = None
        self._pool: Any = None
        self._interrupted: Any = lambda: False
        self._stop_requested = False
        self._batch_totals: dict[int, dict[str, tuple[int, float]]] = {}
        """Per minibatch and agent: replies and reply tokens over every process (:meth:`minibatches`)."""
        self._gap_warned = False
        self._reset_health_totals()
        self._poisoned = False
        """A loss was not finite on this process in the update in flight (many processes)."""
        self.history: list[dict[str, float]] = []
        self.evaluations: list[dict[str, Any]] = []
        """One entry per held-out evaluation: its metrics row plus ``problems`` and ``task_ids``."""
        torch.manual_seed(cfg.seed + 7919 * self.dist.rank)  # ranks sample differently
        if cfg.resume:
            self.resume()
            if self.dist.is_main:
                self._trim_logs()
        self.logger = MetricsLogger(
            self.run_dir, tensorboard=cfg.tensorboard and self.dist.is_main,
            wandb_project=cfg.wandb_project if self.dist.is_main else None, config=cfg.to_dict(),
        ) if self.dist.is_main else None
        if self.dist.is_main:  # before any step or evaluation: a run that crashes early still names its code
            record_start(self.run_dir, self.step, config_provenance(self.cfg, algorithm=self.algorithm))

    # ----------------------------------------------------------------- the loop
    def train(self, steps: int | None = None) -> list[dict[str, float]]:
        """Run until ``cfg.steps`` (or ``steps`` more), then checkpoint, write ``eval.json`` and export the
        weights to ``<run>/final`` (:meth:`save_final`), as ``llm-coop train`` does. Ctrl-C ends the step in
        flight, saves a checkpoint, and stops without the export."""
        target = self.cfg.steps if steps is None else self.step + steps
        progress = _progress(self.step, target, self.cfg.progress_bar and self.dist.is_main)
        try:
            with _deferred_interrupt() as interrupted:
                self._interrupted, self._stop_requested = interrupted, False
                if self.step == 0 and not self.evaluations:
                    self._evaluate_if_due(last=target == 0)
                while self.step < target:
                    metrics = self.train_step()
                    self.step += 1
                    self._log(metrics)
                    progress.update(1)
                    progress.set_postfix(reward=f"{metrics['reward/mean']:.3f}")
                    self._evaluate_if_due(last=self.step == target)
                    stop = self._stop_requested or (self.dist.world_size == 1 and interrupted())
                    if stop or (self.cfg.save_every and self.step % self.cfg.save_every == 0):
                        self.save()
                    if stop:
                        raise KeyboardInterrupt
        finally:
            progress.close()
            self._interrupted = lambda: False
        self.save()
        self._write_eval_summary()
        self.save_final()  # every rank: a sharded model is gathered for the export
        return self.history

    def train_step(self) -> dict[str, float]:
        started = time.perf_counter()
        if self.capabilities.on_step_start is not None:
            self.capabilities.on_step_start(self.step + 1)
        threads = self.fit_threads()
        with distributed.gathered_weights(self.policies):  # sharded weights: whole for generation
            groups = self.rollout()
        rolled = time.perf_counter()
        items = self.training_items(groups)
        self.fit_threads()
        agent_metrics = self.update(items)
        finished = time.perf_counter()
        local = {"rewards": reward_records(groups), "agents": agent_metrics,
                 "perf": {**self._perf(groups, started, rolled, finished), "perf/threads": threads},
                 "stop": self._interrupted()}
        per_rank = self.dist.gather_objects(local)  # the step's one collective for metrics
        # Ranks see a Ctrl-C at different moments: all stop after the step in which any saw it, so
        # that they save (a collective) together.
        self._stop_requested = any(rank["stop"] for rank in per_rank)
        metrics = merge_rank_metrics(per_rank)
        metrics["train/step"] = self.step + 1
        self._warn_sampler_gap(metrics)
        if self.phases:  # -1 before the first phase
            index = phase_index(self.phases, self.step)
            metrics["train/phase"] = -1.0 if index is None else float(index)
        if self.capabilities.on_step_end is not None:
            self.capabilities.on_step_end(self.step + 1, metrics)
        metrics.update(self.algorithm_metrics())
        self._log_samples(groups)
        return metrics

    def algorithm_metrics(self) -> dict[str, float]:
        """What the algorithm logged this step (``algo/<name>``), when it has a metrics channel."""
        pop = self.capabilities.pop_metrics
        return {key: float(value) for key, value in pop().items()} if pop is not None else {}

    def fit_threads(self) -> int:
        """torch's CPU threads for the work ahead (``cpu_threads``); untouched on a GPU."""
        if self.policies.device.type != "cpu":
            return torch.get_num_threads()
        return fit_threads(self.cfg.cpu_threads)

    def _warn_sampler_gap(self, metrics: Mapping[str, float]) -> None:
        """Warn once per run (first process) when the sampler's log-probs stray from the trainer's."""
        gaps = {k: v for k, v in metrics.items() if k.endswith("/sampler_logp_gap") and v > self.cfg.sampler_logp_gap_warn}
        if gaps and not self._gap_warned and self.dist.is_main:
            self._gap_warned = True
            warnings.warn(
                f"Step {self.step + 1}: the sampler's log-probs differ from the trainer's by {gaps} nats per token "
                f"(above sampler_logp_gap_warn={self.cfg.sampler_logp_gap_warn}): the replies are off-policy. "
                "Check that the backend serves the current adapter in the trainer's dtype and LoRA scale, or set "
                "importance_cap (e.g. 2.0) to correct for it.", RuntimeWarning, stacklevel=2)

    # ----------------------------------------------------------------- 1–2: rollouts
    def env_at(self, step: int) -> Any:
        """The training env of ``step`` (0-based): the run's env, or its phase's (:mod:`trainers.phases`)."""
        index = phase_index(self.phases, step)
        if index not in self._phase_envs:
            self._phase_envs[index] = _make_env(self.cfg.env, env_kwargs_at(self.cfg.env_kwargs, self.phases, step))
        return self._phase_envs[index]

    def rollout(self) -> list[Group]:
        env = self.env_at(self.step)
        roots = [root_node(copy.deepcopy(env), seed=self.problem_seed(b)) for b in range(self.cfg.problems_per_step)]
        return grow_trees(
            roots, self.sample, group_size=self.cfg.group_size, joint_mode=self.cfg.joint_mode,
            gamma=self.cfg.gamma, early_stop_reward=self.cfg.early_stop_reward, pool=self._env_pool(),
            greedy_sampler=self.greedy_sample if self.capabilities.needs_greedy_baseline else None,
        )

    def problem_seed(self, index: int) -> int:
        """Seed of the env reset for problem ``index`` of the current step: fixed by (seed, step, rank)."""
        return problem_seed(self.cfg.seed, self.step, index, self.cfg.problems_per_step, self.dist.world_size,
                            self.dist.rank)

    def sample(self, requests: Sequence[tuple[str, str]], n: int):
        return self.backend.generate([GenerationRequest(a, obs, n, self.cfg.sampling_for(a)) for a, obs in requests])

    def greedy_sample(self, requests: Sequence[tuple[str, str]], n: int):
        """The greedy replies (temperature 0) that a greedy-baseline algorithm compares against."""
        greedy = [GenerationRequest(a, obs, n, dataclasses.replace(self.cfg.sampling_for(a), temperature=0.0))
                  for a, obs in requests]
        return self.backend.generate(greedy)

    # ----------------------------------------------------------------- 3: advantages
    def training_items(self, groups: Sequence[Group]) -> dict[str, list[TrainItem]]:
        items: dict[str, list[TrainItem]] = defaultdict(list)
        groups_of: dict[str, list[tuple[int, int]]] = defaultdict(list)  # per item: (depth, node)
        index = 0  # of the joint sample, for minibatches
        for node, group in enumerate(groups):
            advantages = advantage_table(self.algorithm.advantages(group), group)
            for sample, row in zip(group.samples, advantages):
                for agent, advantage in zip(group.agents, row):
                    groups_of[agent].append((group.depth, node))
                    reply = sample.replies[agent]
                    items[agent].append(train_item(agent, reply, advantage, index))
                index += 1
        # Turns and nodes are counted over every process's trees (one gather): the loss is then the
        # same whether N processes or one roll out the step's problems, whatever each tree's shape.
        shared = self.dist.sum_counts({agent: depth_counts(positions) for agent, positions in groups_of.items()})
        for agent, agent_items in items.items():
            weights = reply_weights(groups_of[agent], shared.get(agent), processes=self.dist.world_size)
            items[agent] = [dataclasses.replace(item, weight=w) for item, w in zip(agent_items, weights)]
        return items

    # ----------------------------------------------------------------- 4: updates
    def update(self, items: Mapping[str, list[TrainItem]]) -> dict[str, float]:
        """``updates_per_rollout`` passes over the rollout; in each, one optimizer step per agent key
        per minibatch (one minibatch, the whole rollout, by default), then the owned modules' steps."""
        metrics: dict[str, float] = {}
        self._poisoned = False
        self._reset_health_totals()
        minibatches = self.minibatches(items)
        cache: dict[tuple[str, int, int], dict[str, torch.Tensor]] = {}
        if len(minibatches) > 1:
            with distributed.gathered_weights(self.policies):  # processes score different counts
                self._record_old_logprobs(minibatches, cache)
        logp_totals: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])  # first pass: sum, tokens
        for key in self.optimizers:
            for agent in self.policies.agents_of(key):
                metrics.update(item_metrics(agent, items.get(agent, [])))
        for epoch in range(self.updates_per_rollout):
            losses: dict[str, list[float]] = defaultdict(list)
            norms: dict[str, list[float]] = defaultdict(list)
            for index, minibatch in enumerate(minibatches):
                for key, optimizer in self.optimizers.items():
                    optimizer.zero_grad(set_to_none=True)
                    module = self.policies.training_modules[key]
                    with distributed.local_gradients(self.accelerator, module):
                        for agent in self.policies.agents_of(key):
                            loss, logp_sum, tokens = self._accumulate(agent, minibatch.get(agent, []), cache, index)
                            losses[agent].append(loss)
                            if epoch == 0:  # a later minibatch's log-probs are after earlier steps
                                logp_totals[agent][0] += logp_sum
                                logp_totals[agent][1] += tokens
                    if self._poisoned:
                        for param in self.policies.named_trainable(key).values():
                            param.grad = torch.full_like(param, float("nan"))
                    distributed.synchronize_gradients(self.accelerator, module, self.policies, key)
                    # after the synchronisation: under FSDP these are the shards the optimizer steps
                    norm = clip_gradients(list(self.policies.named_trainable(key).values()), self.cfg.max_grad_norm)
                    if not math.isfinite(norm):
                        raise FloatingPointError(self._non_finite_message(
                            f"The gradients of {key!r} are not finite (a non-finite loss or an overflow, on some process)"
                        ))
                    for agent in self.policies.agents_of(key):
                        norms[agent].append(norm)
                    optimizer.step()
            for _ in range(self.capabilities.module_updates if self.owned_modules else 0):
                self._update_owned_modules()
            distributed.sync_backend(self.backend, self.policies)
        # the last pass's loss and gradient norm, averaged over its minibatches
        metrics.update({f"agent/{a}/loss": sum(v) / len(v) for a, v in losses.items()})
        metrics.update({f"agent/{a}/grad_norm": sum(v) / len(v) for a, v in norms.items()})
        # the share of those optimizer steps whose gradient was scaled down to max_grad_norm
        metrics.update({f"agent/{a}/grad_clipped": sum(n > self.cfg.max_grad_norm for n in v) / len(v)
                        for a, v in norms.items()})
        metrics.update({f"agent/{a}/logp_mean": s / n for a, (s, n) in logp_totals.items() if n})
        metrics.update({f"agent/{a}/clip_fraction": c / n for a, (c, n) in self._clip_totals.items() if n})
        metrics.update({f"agent/{a}/approx_kl": k / n for a, (k, n) in self._kl_totals.items() if n})
        metrics.update({f"agent/{a}/sampler_logp_gap": g / n for a, (g, n) in self._gap_totals.items() if n})
        metrics["train/optimizer_steps"] = float(self.updates_per_rollout * len(minibatches))
        return metrics

    def _reset_health_totals(self) -> None:
        """Per agent, over one update: (tokens with an active clip, Σ k3(π_old‖π_θ), Σ |sampler − π_old|), each with its token count."""
        self._clip_totals: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
        self._kl_totals: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
        self._gap_totals: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])

    def minibatches(self, items: Mapping[str, list[TrainItem]]) -> list[dict[str, list[TrainItem]]]:
        """The step's items split into minibatches of ``minibatch_size`` joint samples per process, in
        rollout order.

        Each agent's weights are rescaled to sum to 1 within a minibatch over all processes (the
        minibatches of one index on every process form one minibatch of the global batch), so each
        minibatch's loss is a mean over its replies. Without ``minibatch_size``: one minibatch, the
        items as they are. With many processes every one takes as many optimizer steps as the one with
        the most samples (a process short of samples joins the gradient all-reduce with an empty
        minibatch); the replies and tokens of each minibatch are counted over all processes (one
        gather), for ``token_mean``."""
        size = self.minibatch_size
        split: list[dict[str, list[TrainItem]]] = [dict(items)]
        if size is not None:
            samples = 1 + max((item.sample for agent_items in items.values() for item in agent_items), default=-1)
            split = [defaultdict(list) for _ in range(max(math.ceil(samples / size), 1))]
            for agent, agent_items in items.items():
                for item in agent_items:
                    split[item.sample // size][agent].append(item)
        local = [{agent: item_totals(part_items) for agent, part_items in part.items()} for part in split]
        totals = self.dist.sum_counts(dict(enumerate(local)))
        count = 1 + max(totals, default=0)
        split += [{} for _ in range(count - len(split))]  # a process short of samples joins with empty ones
        self._batch_totals = {index: {agent: (t["replies"], t["tokens"]) for agent, t in part.items()}
                              for index, part in totals.items()}
        if size is None:
            return split
        processes = self.dist.world_size
        return [{agent: rescaled(part_items, totals[index][agent]["weight"] / processes)
                 for agent, part_items in part.items()} for index, part in enumerate(split)]

    @torch.no_grad()
    def _record_old_logprobs(self, minibatches: list[dict[str, list[TrainItem]]], cache: dict) -> None:
        """π_old of every minibatch before the update's first optimizer step: a later minibatch is
        scored after the policy has moved, and its ratio must not start at 1. (π_ref does not move:
        :meth:`_accumulate` scores it when it first needs it.)"""
        for index, minibatch in enumerate(minibatches):
            for agent, items in minibatch.items():
                sampling = self.cfg.sampling_for(agent)
                for start, micro in self._micro_batches(items):
                    prompts, completions = [i.prompt_ids for i in micro], [i.completion_ids for i in micro]
                    saved = cache.setdefault((agent, index, start), {})
                    saved["old"] = self.policies.token_logprobs(agent, prompts, completions, sampling)[0].detach()

    def _update_owned_modules(self) -> None:
        """One optimizer step of the algorithm's own modules on its ``modules_loss`` (DDP averages the
        gradients in the backward, as for the policies)."""
        for optimizer in self.owned_optimizers.values():
            optimizer.zero_grad(set_to_none=True)
        loss = self.algorithm.modules_loss(self.owned_modules)
        if loss is None:
            return
        # A non-finite loss on any process makes the averaged gradients non-finite on every process:
        # all of them stop here, before any step, and the last checkpoint stays intact.
        self.accelerator.backward(loss)
        params = [p for module in self.owned_modules.values() for p in module.parameters()]
        if not math.isfinite(clip_gradients(params, self.cfg.max_grad_norm)):
            raise FloatingPointError(self._non_finite_message("The gradients of the algorithm's modules are not finite"))
        for optimizer in self.owned_optimizers.values():
            optimizer.step()

    def _non_finite_message(self, what: str) -> str:
        return (f"{what} at step {self.step + 1} (algorithm {self.cfg.algo}): training stopped before this "
                f"update; the last checkpoint in {self.run_dir / 'checkpoints'} is intact. Lower learning_rate "
                "or check the rewards.")

    def _micro_batches(self, items: list[TrainItem]) -> list[tuple[int, list[TrainItem]]]:
        """``(offset, replies)`` slices of ``micro_batch_size`` of the replies that need a forward pass.

        Replies with advantage 0 are skipped only when the algorithm declares its loss is 0 there
        (``zero_loss_at_zero_advantage``) and no KL term is on; they still count in the weights."""
        skip_zero = self.capabilities.zero_loss_at_zero_advantage is True and self.loss_options.kl_coef == 0
        needed = [i for i in items if not i.is_zero] if skip_zero else items
        needed = [i for i in needed if i.completion_ids]
        size = self.cfg.micro_batch_size
        return [(start, needed[start : start + size]) for start in range(0, len(needed), size)]

    def _accumulate(self, agent: str, items: list[TrainItem], cache: dict, minibatch: int = 0) -> tuple[float, float, float]:
        """Backward the agent's loss on one minibatch's ``items`` over micro-batches; returns the loss
        value, the sum of the replies' token log-probs and their token count.

        A loss that is not finite stops training before any optimizer step of this update."""
        options = self.loss_options
        sampling = self.cfg.sampling_for(agent)
        total_replies, total_tokens = self._batch_totals.get(minibatch, {}).get(
            agent, (len(items), float(sum(len(i.completion_ids) for i in items))))
        value, logp_sum, token_count = 0.0, 0.0, 0.0
        for start, micro in self._micro_batches(items):
            prompts, completions = [i.prompt_ids for i in micro], [i.completion_ids for i in micro]
            logps, mask = self.policies.token_logprobs(agent, prompts, completions, sampling)
            saved = cache.setdefault((agent, minibatch, start), {})
            if "old" not in saved:  # the first pass over a rollout taken as one minibatch: π_old = π_θ
                saved["old"] = logps.detach()
            if options.kl_coef > 0 and "ref" not in saved:
                saved["ref"] = self.policies.reference_logprobs(agent, prompts, completions, sampling)
            sampler = sampler_logps(micro, saved["old"])
            if "gap" not in saved:  # once per reply: π_old is the policy the sampler should have matched
                saved["gap"] = sampler_gap(sampler, saved["old"], mask)
                self._gap_totals[agent] = [a + b for a, b in zip(self._gap_totals[agent], saved["gap"])]
            batch = LossBatch(
                agent=agent, logps=logps, old_logps=saved["old"], mask=mask,
                advantages=advantage_tensor([i.loss_advantage for i in micro], logps.shape[1], logps),
                ref_logps=saved.get("ref"), **dataclasses.asdict(options), total_replies=total_replies, total_tokens=total_tokens,
                weights=torch.tensor([i.weight for i in micro], dtype=logps.dtype, device=logps.device),
                importance_weights=importance_weights(sampler, saved["old"], mask, self.cfg.importance_cap),
            )
            loss = self.algorithm.loss(batch)
            self._clip_totals[agent] = [a + b for a, b in zip(self._clip_totals[agent], clip_counts(batch))]
            self._kl_totals[agent] = [a + b for a, b in zip(self._kl_totals[agent], approx_kl_sum(batch))]
            if not bool(torch.isfinite(loss.detach()).all()):
                if self.dist.world_size == 1:
                    raise FloatingPointError(self._non_finite_message(f"The loss of agent {agent!r} is {float(loss.detach())}"))
                # The other processes are about to all-reduce with this one: poison the gradients
                # instead, so that every process stops at the same point (update()).
                self._poisoned = True
                continue
            self.accelerator.backward(loss)
            value += float(loss.detach())
            logp_sum += float((logps.detach() * mask).sum())
            token_count += float(mask.sum())
        return value, logp_sum, token_count

    # ----------------------------------------------------------------- 5: logs and checkpoints
    def _log(self, metrics: dict[str, float]) -> None:
        self.history.append(metrics)
        if self.logger is not None:
            self.logger.log(self.step, metrics)

    def _log_samples(self, groups: Sequence[Group]) -> None:
        if self.logger is None or self.cfg.log_samples <= 0:
            return
        records = []
        for group in groups[: self.cfg.log_samples]:
            sample = group.samples[0]
            records.append({
                "depth": group.depth, "observations": sample.observations,
                "replies": {a: c.text for a, c in sample.replies.items()},
                "reward": sample.reward, "return": sample.return_, "components": sample.components,
                "group_returns": group.returns.tolist(),
            })
        self.logger.log_samples(self.step + 1, records)  # numbered like the step's metrics

    def _perf(self, groups: Sequence[Group], started: float, rolled: float, finished: float) -> dict[str, float]:
        tokens = sum(len(c.completion_ids) for g in groups for s in g.samples for c in s.replies.values())
        rollout_s = rolled - started
        return {
            "perf/rollout_s": rollout_s, "perf/update_s": finished - rolled, "perf/step_s": finished - started,
            "perf/generated_tokens": tokens, "perf/problems": self.cfg.problems_per_step,
        }

    def save(self) -> Path | None:
        """Checkpoint the state between two steps (called by every rank: each writes its own generators)."""
        if self._saved_step == self.step:
            return None
        self._saved_step = self.step
        state = {"keys": list(self.optimizers), "modules": list(self.owned_modules), "config": self.cfg.to_dict(), "provenance": config_provenance(self.cfg, algorithm=self.algorithm)}
        path = save_checkpoint(self.accelerator, self.run_dir, self.step, state, self.cfg.keep_checkpoints)
        return path if self.dist.is_main else None

    def resume(self, path: Path | None = None) -> bool:
        """Load the latest checkpoint of this run (or ``path``); False when there is none."""
        path = path or latest_checkpoint(self.run_dir)
        if path is None:
            return False
        state = restore_checkpoint(self.accelerator, path, list(self.optimizers), list(self.owned_modules))
        self.step = self._saved_step = int(state["step"])
        distributed.sync_backend(self.backend, self.policies)
        return True

    def _trim_logs(self) -> None:
        """Drop what was logged after the checkpoint (the step in flight when the run stopped), and
        recover the evaluations already taken."""
        # Without a checkpoint nothing is kept (the run starts again from step 0, evaluation included).
        last = self.step if latest_checkpoint(self.run_dir) is not None else -1
        trim_jsonl(self.run_dir / METRICS_FILE, lambda row: row.get("train/step", row.get("step", 0)) <= last)
        trim_jsonl(self.run_dir / SAMPLES_FILE, lambda row: row.get("step", 0) <= last)
        for path in sorted((self.run_dir / "eval").glob("step_*.jsonl")):
            if int(path.stem.split("_")[1]) > last:
                path.unlink()
        if (self.run_dir / METRICS_FILE).is_file():
            for row in read_metrics(self.run_dir):
                if "eval/reward" in row:
                    records = read_jsonl(self.run_dir / "eval" / f"step_{int(row['train/step']):05d}.jsonl")
                    self.evaluations.append({**row, "problems": len(records), "task_ids": [r["task_id"] for r in records]})

    # ----------------------------------------------------------------- held-out evaluation
    def _evaluate_if_due(self, last: bool) -> None:
        if self.eval_env is None:
            return
        every = self.cfg.eval_every
        if self.step == 0 or last or (every and self.step % every == 0):
            self.evaluate_now()

    def evaluate_now(self) -> EvalResult | None:
        """Evaluate the held-out problems greedily at the current step; log and record it (first rank).
        Every rank calls it: sharded weights (FSDP) are gathered for the first rank's generation."""
        if self.eval_env is None:
            return None
        with distributed.gathered_weights(self.policies):
            return self._evaluate_gathered() if self.dist.is_main else None

    def _evaluate_gathered(self) -> EvalResult | None:
        if self.evaluations and self.evaluations[-1]["train/step"] == self.step:
            return None  # already evaluated at this step
        self.fit_threads()
        result = evaluate(self.eval_env, self.backend, self.cfg, self.cfg.eval_problems,
                          progress=self.cfg.progress_bar)
        row = {"train/step": self.step, **result.as_metrics()}
        self.logger.log(self.step, row)
        folder = self.run_dir / "eval"
        folder.mkdir(parents=True, exist_ok=True)
        origin = self.eval_provenance()
        lines = "".join(json.dumps({**record, "provenance": origin}) + "\n" for record in result.records)
        (folder / f"step_{self.step:05d}.jsonl").write_text(lines, encoding="utf-8")
        self.evaluations.append({**row, "problems": result.problems, "task_ids": list(result.task_ids)})
        return result

    def _write_eval_summary(self) -> None:
        """``eval.json``: the first and the last evaluation of the run, written once at the end."""
        if not self.evaluations or not self.dist.is_main:
            return
        first, last = self.evaluations[0], self.evaluations[-1]
        summary = {
            "before": _eval_view(first), "after": _eval_view(last), "steps": self.step,
            "problems": last["problems"], "task_ids": last["task_ids"], "provenance": self.eval_provenance(),
        }
        (self.run_dir / "eval.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")

    def eval_provenance(self) -> dict[str, Any]:
        """The provenance of the held-out evaluations: greedy sampling, the held-out env's id and kwargs."""
        spec = getattr(self.eval_env, "spec", None)
        kwargs = dict(spec.kwargs) if spec is not None else dict(self.cfg.eval_env_kwargs or self.cfg.env_kwargs)
        record = config_provenance(self.cfg, greedy=True, env_kwargs=kwargs, algorithm=self.algorithm)
        if spec is not None:
            record["env"]["id"] = spec.id
        return record

    def save_final(self) -> Path:
        """Export the trained weights to ``<run>/final`` (peft adapters or full models, with tokenizers)
        with ``provenance.json``; adapters name a base model id that another machine resolves. Every rank
        calls it (sharded weights are gathered); the first rank writes."""
        folder = self.run_dir / "final"
        self.policies.save_pretrained(str(folder), write=self.dist.is_main)
        if self.dist.is_main:
            write_provenance(folder, config_provenance(self.cfg, algorithm=self.algorithm))
        return folder

    def _env_pool(self):
        """The trainer's thread pool for stepping env copies in parallel, made on first use."""
        if self._pool is None:
            from concurrent.futures import ThreadPoolExecutor

            self._pool = ThreadPoolExecutor(max_workers=self.cfg.env_workers, thread_name_prefix="env-step")
        return self._pool

    def close(self) -> None:
        """Close the logs, the env pool and the backend; under a multi-process launch, end the process
        group (call it last: no collective works after it)."""
        if self.logger is not None:
            self.logger.close()
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        getattr(self.backend, "close", lambda: None)()  # e.g. a vLLM server drops this run's adapters
        # The last step under a launch: every rank leaves the process group before the interpreter
        # exits (an exit with it alive aborts at random, distributed.end_process_group). So close()
        # comes after every collective (save_final, gathering sharded weights), as the CLI calls it.
        distributed.end_process_group(self.accelerator)


# ---------------------------------------------------------------------------- helpers


def _eval_view(row: Mapping[str, Any]) -> dict[str, Any]:
    """An evaluation for ``eval.json``: its metrics row, and the same numbers under short names."""
    short = {key.split("/", 1)[1]: value for key, value in row.items() if key.startswith("eval/")}
    return {**{k: v for k, v in row.items() if k != "task_ids"}, **short, "step": row["train/step"]}


def _held_out_env(cfg: TrainConfig, env: Any, eval_env: Any) -> Any:
    """The env of held-out evaluations, or an error before training starts when there is none."""
    if not cfg.eval_problems:
        return None
    if eval_env is not None:
        return eval_env
    if env is not None and cfg.eval_env_kwargs is None:
        raise ValueError(
            f"eval_problems={cfg.eval_problems} with a ready training env needs its held-out twin: pass "
            "Trainer(eval_env=...) (or eval_env_kwargs to build it from cfg.env), or set eval_problems=0."
        )
    return make_eval_env(cfg)


@contextlib.contextmanager
def _deferred_interrupt():
    """Within the block, the first Ctrl-C only sets a flag (the loop saves a whole step and stops);
    a second one interrupts at once. Outside the main thread, Ctrl-C is left as it is."""
    hits: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield lambda: False
        return

    def on_interrupt(signum, frame):
        if hits:
            raise KeyboardInterrupt
        hits.append(signum)
        print("\nCtrl-C: finishing the current step, then saving (Ctrl-C again to stop without saving).")

    previous = signal.signal(signal.SIGINT, on_interrupt)
    try:
        yield lambda: bool(hits)
    finally:
        signal.signal(signal.SIGINT, previous)


def _check_single_agent(capabilities: Capabilities, agents: tuple[str, ...], cfg: TrainConfig) -> None:
    if capabilities.single_agent and len(agents) > 1 and cfg.policy != "shared":
        raise ValueError(
            f"{cfg.algo} trains one agent doing the whole task, but {cfg.env} has agents {list(agents)}: "
            "use a one-agent env (coding envs: env_kwargs.team=single) or policy=shared."
        )


def _check_same_agents(env: Any, agents: tuple[str, ...], step: int) -> None:
    if tuple(env.possible_agents) != agents:
        raise ValueError(f"The phase starting at step {step} makes an env with agents {list(env.possible_agents)}, "
                         f"but the run trains {list(agents)}: a phase may change env settings, not the team.")


def _make_env(env_id: str, kwargs: Mapping[str, Any]):
    import llm_coop_envs

    return llm_coop_envs.make(env_id, **dict(kwargs))


class _NoProgress:
    def update(self, n: int) -> None: ...
    def set_postfix(self, **kwargs: Any) -> None: ...
    def close(self) -> None: ...


def _progress(start: int, total: int, enabled: bool):
    if not enabled:
        return _NoProgress()
    from tqdm.auto import tqdm

    return tqdm(total=total, initial=start, desc="train", unit="step")
