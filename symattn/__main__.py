"""`python -m symattn` and the `symattn` command (pyproject's script entry point)."""


def start() -> None:
    """The command line, with a Ctrl-C while its modules load ending in the one line of any interrupt."""
    try:
        from .cli import run
    except KeyboardInterrupt:
        import sys

        print("symattn: interrupted", file=sys.stderr)
        raise SystemExit(130) from None
    run()


if __name__ == "__main__":
    start()
