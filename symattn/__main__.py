"""`python -m symattn`."""

try:
    from .cli import run
except KeyboardInterrupt:  # Ctrl-C while the command line's modules load: the one line of any interrupt
    import sys

    print("symattn: interrupted", file=sys.stderr)
    raise SystemExit(130) from None

run()
