"""The attack classes of the third coding-reward revision, as replies built for any coding env.

Each env gets one problem with a hand-checked split of work (``Case``): a helper ``aux`` that does
part of the job, a main that needs it, and ``_mine``, main's own correct code for the whole job.
Every trick is a reply pair built from those pieces, beside the honest reply that does the same
without the trick (its baseline); the tests compare the two rewards and read the feedback.
"""

from __future__ import annotations

import ast

import dataclasses
import warnings

import llm_coop_envs

CURRENT_IDS = ("coop_humaneval-v2", "coop_basics-v2", "humaneval-v2", "mbpp-v2", "coop_procedural-v1")
SUPERSEDED = {"coop_humaneval-v2": "coop_humaneval-v1", "coop_basics-v2": "coop_basics-v1",
              "humaneval-v2": "humaneval-v1", "mbpp-v2": "mbpp-v1", "coop_procedural-v1": "coop_procedural-v0"}


@dataclasses.dataclass(frozen=True)
class Case:
    task_id: str | None
    """None: the first problem of ``split`` at ``level`` whose helper holds a fact (procedural)."""
    entry: str
    params: str
    helper: str
    """The real split: ``aux`` doing part of the job."""
    main: str
    """Main's body (indented) using ``aux`` for real."""
    mine: str
    """``def _mine(<params>):`` solving the whole problem alone."""
    split: str = "all"
    kwargs: tuple = ()

    @property
    def first(self) -> str:
        return self.params.split(",")[0].strip()

    def entry_def(self, body: str) -> str:
        return f"def {self.entry}({self.params}):\n" + "".join(f"    {line}\n" for line in body.split("\n"))

    def solo(self, extra: str = "") -> str:
        """A correct main that never calls ``aux`` (``extra`` lines first)."""
        return self.mine + "\n" + self.entry_def(extra + f"return _mine({self.params})")

    def whole_aux(self) -> str:
        """A helper whose ``aux`` is the whole solution (main can only wrap it)."""
        return self.mine.replace("def _mine(", "def aux(", 1)


PRIME = ("def _prime(n):\n    return n > 1 and all(n % d for d in range(2, int(n ** 0.5) + 1))\n\n"
         "def _mine(n, x, y):\n    return x if _prime(n) else y\n")
CASES = {
    "coop_basics-v2": Case(
        "coop_basics/t1/bonus_points", "add_bonus_points", "scores",
        "def aux(score):\n    return score + 10\n", "    return [aux(s) for s in scores]\n",
        "def _mine(scores):\n    return [s + 10 for s in scores]\n"),
    "coop_humaneval-v2": Case(
        "CoopHumanEval/0", "x_or_y", "n, x, y",
        "def aux(n):\n    return n > 1 and all(n % d for d in range(2, int(n ** 0.5) + 1))\n",
        "    return x if aux(n) else y\n", PRIME),
    "humaneval-v2": Case(
        "HumanEval/0", "has_close_elements", "numbers, threshold",
        "def aux(a, b):\n    return abs(a - b)\n",
        "    return any(aux(a, b) < threshold for i, a in enumerate(numbers) for b in numbers[i + 1:])\n",
        "def _mine(numbers, threshold):\n"
        "    return any(abs(a - b) < threshold for i, a in enumerate(numbers) for b in numbers[i + 1:])\n"),
    "mbpp-v2": Case(
        "MBPP/0", "remove_Occ", "s, ch",
        "def aux(s, ch):\n    return s.replace(ch, '', 1)\n",
        "    return aux(aux(s, ch)[::-1], ch)[::-1]\n",
        "def _mine(s, ch):\n    s = s.replace(ch, '', 1)\n    return s[::-1].replace(ch, '', 1)[::-1]\n"),
}


def procedural_case(env_id: str = "coop_procedural-v1") -> Case:
    """The first level-2 test problem of ``env_id`` whose ``aux`` holds a helper-only fact."""
    env = make(env_id, split="test", level=2)
    row = next(p.row for p in (env.task.problems[i] for i in range(len(env.task))) if p.row["helper_fact"])
    entry = row["entry_point"]
    params = row["prompt"].split("(", 1)[1].split(")", 1)[0]
    own = row["reference_helper"].replace("def aux(", "def _own(", 1)
    mine = own + "\n" + row["reference_main"].replace(f"def {entry}(", "def _mine(", 1).replace("aux(", "_own(")
    main_body = row["reference_main"].split("\n", 1)[1]
    return Case(row["task_id"], entry, params, row["reference_helper"], main_body, mine, split="test",
                kwargs=(("level", 2),))


def case(env_id: str) -> Case:
    """``env_id``'s case (a superseded procedural id draws other problems: its own first one)."""
    if env_id.startswith("coop_procedural"):
        return procedural_case(env_id)
    return CASES.get(env_id) or CASES[next(new for new, old in SUPERSEDED.items() if old == env_id)]


def make(env_id: str, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return llm_coop_envs.make(env_id, **kwargs)


def env_for(env_id: str, c: Case, **kwargs):
    return make(env_id, split=c.split, **dict(c.kwargs), **kwargs)


def step(env, c: Case, helper: str, main: str, turns: int = 1):
    """Every turn's (reward of main, infos) for the same replies, from a fresh episode on ``c``'s problem."""
    env.reset(options={"task_id": c.task_id})
    out = []
    for _ in range(turns):
        _, rewards, terminations, truncations, infos = env.step({"helper": helper, "main": main})
        out.append((rewards["main"], infos["main"], infos))
        if all(terminations.values()) or all(truncations.values()):
            break
    return out


# ------------------------------------------------------------------------------------------ the tricks
IRRELEVANT_HELPER = "def aux(v, *rest):\n    return repr(v) + '!'\n"
IDENTITY_HELPER = "def aux(v, *rest):\n    return v\n"
SELECTOR_HELPER = "def aux(first, second):\n    return second\n"
TUPLE_HELPER = "def aux(*values):\n    return values\n"
RAISING_HELPER = "def aux(*args):\n    raise ValueError('no')\n"
WRONG_HELPER = "def aux(*args):\n    return None\n"
SHADOWS = ("def range(*args):\n    return __import__('builtins').range(*args)\n\n"
           "def all(values):\n    return __import__('builtins').all(values)\n")
USES_BUILTINS = "if not all(True for _ in range(1)):\n    return None\n"


def tricks(c: Case) -> dict[str, tuple[tuple[str, str], tuple[str, str]]]:
    """Class name -> ((helper, main) with the trick, (helper, main) of the same reply without it)."""
    call = f"_mine({c.params})"
    wrap = c.whole_aux()
    plain_wrapper = (wrap, c.entry_def(f"return aux({c.params})"))
    return {
        "identity helper routed through": (
            (IDENTITY_HELPER, c.solo(f"{c.first} = aux({c.first})\n")), (IDENTITY_HELPER, c.solo())),
        "dead store": ((IRRELEVANT_HELPER, c.solo(f"_ = aux({c.first})\n")), (IRRELEVANT_HELPER, c.solo())),
        "identity helper as a selector (`aux(0, x)`)": (
            (SELECTOR_HELPER, c.solo(f"{c.first} = aux(0, {c.first})\n")), (SELECTOR_HELPER, c.solo())),
        "identity helper inside a tuple (`aux(x)[0]`)": (
            (TUPLE_HELPER, c.solo(f"{c.first} = aux({c.first})[0]\n")), (TUPLE_HELPER, c.solo())),
        "value dropped by indexing": (
            (IRRELEVANT_HELPER, c.mine + "\n" + c.entry_def(f"return [{call}, aux({c.first})][0]")),
            (IRRELEVANT_HELPER, c.solo())),
        "try falling back to main's code": (
            (RAISING_HELPER, c.mine + "\n" + c.entry_def(
                f"try:\n    return aux({c.params})\nexcept Exception:\n    return {call}")),
            (RAISING_HELPER, c.solo())),
        "call in a branch never taken": (
            (c.helper, c.solo(f"if len(repr({c.first})) < 0:\n    return aux({c.first})\n")), (c.helper, c.solo())),
        "thin wrapper: conditional": ((wrap, c.entry_def(f"return aux({c.params}) if True else None")), plain_wrapper),
        "thin wrapper: aliases": ((wrap, c.entry_def(f"f = aux\ng = f\nreturn g({c.params})")), plain_wrapper),
        "thin wrapper: 1-tuple index": ((wrap, c.entry_def(f"return (aux({c.params}),)[0]")), plain_wrapper),
        "thin wrapper: walrus": ((wrap, c.entry_def(f"return (r := aux({c.params}))")), plain_wrapper),
        "thin wrapper: list splat": ((wrap, c.entry_def(f"return [*[aux({c.params})]][0]")), plain_wrapper),
        "helper redefines builtins main uses": (
            (c.helper + "\n" + SHADOWS, c.solo(USES_BUILTINS)), (c.helper, c.solo(USES_BUILTINS))),
        "main rewrites aux through a spelled-out __globals__": (
            (WRONG_HELPER, c.mine + "\n" + c.entry_def(
                f"getattr({c.entry}, '__glob' + 'als__')['aux'] = _mine\nr = aux({c.params})\n"
                "return r if r is not None else r")),
            (WRONG_HELPER, c.solo())),
    }


# ------------------------------------------------------------- replies that differ on hidden tests only
def hidden_variants(c: Case, public_calls: list[str], hidden_calls: list[str]) -> dict[str, tuple[str, str]]:
    """Replies equal on the public examples (wrong on them, so the episode goes on) that differ on
    hidden calls: in the exception kind raised, the hidden tests passed (the first or the second
    hidden call, told by its arguments), and in the identifiers each agent chose. Nothing of that may reach an observation."""
    public = "_PUBLIC = {" + ", ".join(public_calls) + "}\n"
    head = f"key = repr(({c.params},))\nif key in _PUBLIC:\n    return None\n"
    mains = {
        "raises ValueError": "raise ValueError(key)",
        "raises KeyError": "raise KeyError(key)",
        "raises ZeroDivisionError": "return 1 // 0",
        "returns a wrong value": "return None",
        # Under v2 each hidden test runs in a fresh process, where a call counter always reads 1
        # (state_tricks below): the calls' own arguments say which hidden test it is.
        "passes the first hidden call": f"if key == {hidden_calls[0]}:\n    return {'_mine(' + c.params + ')'}\nraise ValueError(key)",
        "passes the second hidden call": f"if key == {hidden_calls[1]}:\n    return {'_mine(' + c.params + ')'}\nreturn None",
        "loops": "while True:\n    pass",
    }
    helpers = {"plain": c.helper, "named zq_helper_secret": c.helper + "\ndef zq_helper_secret(v):\n    return v\n"}
    out = {}
    for h_name, helper in helpers.items():
        for m_name, body in mains.items():
            main = public + c.mine + "\ndef zq_main_secret():\n    return 0\n\n" + c.entry_def(head + body)
            out[f"{m_name}, helper {h_name}"] = (helper, main)
    return out


# ------------------------------------------------------------------- state kept from one test to the next
_PROBE = "'\\0zq_state_probe'"
STATE_MARKS = {
    "a module global counts calls": (
        "_CALLS = [0]\n\ndef _seen():\n    _CALLS[0] += 1\n    return _CALLS[0] > 1\n"),
    "a file in the working folder": (
        "import os\n\ndef _seen():\n    seen = os.path.exists('zq_mark')\n"
        "    open('zq_mark', 'w').close()\n    return seen\n"),
    "a replaced builtin": (
        "import builtins\n_ABS = builtins.abs\n\ndef _seen():\n    seen = builtins.abs is not _ABS\n"
        "    builtins.abs = lambda x: _ABS(x)\n    return seen\n"),
    "a process left running": (
        "import os, socket, time\n\ndef _seen():\n    probe = socket.socket(socket.AF_UNIX)\n    try:\n"
        f"        probe.connect({_PROBE})\n        return True\n    except OSError:\n        pass\n"
        "    ready, done = os.pipe()\n    if os.fork() == 0:\n"
        f"        server = socket.socket(socket.AF_UNIX)\n        server.bind({_PROBE})\n"
        "        server.listen(8)\n        os.write(done, b'x')\n        time.sleep(60)\n        os._exit(0)\n"
        "    os.read(ready, 1)\n    return False\n"),
}
"""Ways a program can tell a later test from the first one: each ``_seen()`` says whether an earlier
call left its mark, and leaves it."""


def state_tricks(c: Case) -> dict[str, tuple[tuple[str, str], tuple[str, str]]]:
    """Mechanism -> (the trick: a main correct only once an earlier test left a mark, the same reply
    without the trick: what it does when no mark is found, wrong on every call)."""
    wrong = (c.helper, c.entry_def("return None"))
    return {name: ((c.helper, c.mine + "\n" + mark + "\n" + c.entry_def(
        f"if _seen():\n    return _mine({c.params})\nreturn None")), wrong)
            for name, mark in STATE_MARKS.items()}


def call_reprs(env, c, hidden: bool = False) -> list[str]:
    """The reprs of the arguments of the problem's public (or hidden) tests' calls."""
    env.reset(options={"task_id": c.task_id})
    problem = env.task.problems[env._episode.index]
    calls = []
    for test in problem.tests if hidden else problem.public_tests:
        node = next(n for n in ast.walk(ast.parse(test.label)) if isinstance(n, ast.Call)
                    and isinstance(n.func, ast.Name) and n.func.id == "candidate")
        calls.append(repr(repr(tuple(ast.literal_eval(a) for a in node.args))))
    return calls
