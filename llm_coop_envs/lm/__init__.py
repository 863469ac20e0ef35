"""The project's language model, on the ground floor of the env package: its weights' cache and
loading, the model module the project owns, and the engine that prefills, samples and scores with
it. The sampler (`trainers.generation`), the loss (`trainers.logprobs`) and the writing reward's
model (`llm_coop_envs.writing.lm`) all call it. Torch is imported lazily: importing the env package
never imports it."""
