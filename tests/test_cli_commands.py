"""``llm-coop`` finds its subcommands through entry points, so each package owns its own commands."""

import pytest

from llm_coop_envs import cli
from llm_coop_envs.cli import COMMANDS_ENTRY_POINT_GROUP, main

BUNDLED = {"train", "pull-model", "eval", "bench"}


def hello_command(argv):
    """Say hello to the arguments.

    Example: llm-coop hello world    # greets the world
    """
    print("hello", *argv)
    return 3


def install(tmp_path, monkeypatch, dist_name, entries):
    """A dist-info folder on sys.path that declares ``entries`` in the commands group, as pip would write it."""
    dist = tmp_path / f"{dist_name}-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist_name}\nVersion: 1.0\n")
    lines = "".join(f"{name} = {target}\n" for name, target in entries.items())
    (dist / "entry_points.txt").write_text(f"[{COMMANDS_ENTRY_POINT_GROUP}]\n{lines}")
    monkeypatch.syspath_prepend(str(tmp_path))


def test_the_checkout_declares_the_bundled_commands():
    assert set(cli._checkout_targets()) == BUNDLED
    assert BUNDLED <= set(cli.command_targets())


def test_an_installed_package_adds_a_command_with_its_help_and_example(tmp_path, monkeypatch, capsys):
    install(tmp_path, monkeypatch, "hello_plugin", {"hello": "tests.test_cli_commands:hello_command"})
    assert main(["hello", "a", "b"]) == 3
    assert capsys.readouterr().out == "hello a b\n"
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "say hello to the arguments" in out and "llm-coop hello world    # greets the world" in out
    assert all(name in out for name in BUNDLED)


def test_bundled_commands_run_through_installed_entry_points(tmp_path, monkeypatch, capsys):
    install(tmp_path, monkeypatch, "llm_coop_bundled", cli._checkout_targets())
    monkeypatch.setattr(cli, "_checkout_targets", dict)  # only the installed entry points are left
    assert BUNDLED <= set(cli.command_targets())
    assert main(["bench", "--report-only", "--runs-dir", str(tmp_path / "none"), "--out", str(tmp_path / "o")]) == 2
    assert "no benchmark in" in capsys.readouterr().err


def test_a_broken_plug_in_is_one_clear_line(tmp_path, monkeypatch, capsys):
    (tmp_path / "raises_on_import_for_llm_coop.py").write_text("raise RuntimeError('half installed')\n")
    install(tmp_path, monkeypatch, "broken_plugin", {
        "gone": "no_such_module_for_llm_coop:run", "typo": "tests.test_cli_commands:no_such_function",
        "crash": "raises_on_import_for_llm_coop:run"})
    assert main(["gone"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "llm-coop gone cannot be loaded" in err and "no_such_module" in err
    assert main(["typo"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no_such_function" in err
    assert main(["crash"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "RuntimeError: half installed" in err
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "(unavailable: llm-coop gone cannot be loaded" in capsys.readouterr().out


def test_two_packages_declaring_one_command_is_an_error(tmp_path, monkeypatch, capsys):
    install(tmp_path, monkeypatch, "first_plugin", {"hello": "tests.test_cli_commands:hello_command"})
    install(tmp_path, monkeypatch, "second_plugin", {"hello": "elsewhere:hello"})
    assert main(["envs"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "two installed packages declare the command 'hello'" in err


def test_no_package_replaces_envs(tmp_path, monkeypatch, capsys):
    install(tmp_path, monkeypatch, "envs_plugin", {"envs": "tests.test_cli_commands:hello_command"})
    assert main(["envs"]) == 0
    assert "hello" not in capsys.readouterr().out
