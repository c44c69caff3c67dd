"""`make test` and `make run` where there is no make (Windows): `python -m nox -s tests`."""

import nox


@nox.session
def tests(session: nox.Session) -> None:
    """Install gamepak with its test extras and run the whole suite."""
    session.install("-e", ".[test]")
    session.run("python", "-m", "pytest", "-q", "-n", "2")


@nox.session
def run(session: nox.Session) -> None:
    """Install gamepak and run the demo job (what `make run` does)."""
    session.install("-e", ".")
    session.run("python", "-m", "gamepak.demo", "build/demo")
