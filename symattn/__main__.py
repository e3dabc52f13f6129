"""`python -m symattn`."""

import signal
import sys

from .cli import Terminated, main, terminate

# SIGTERM raises Terminated from the first line on; a Ctrl-C or SIGTERM that arrives as the command returns (its
# files all in place, or none replaced) ends in the status of an interrupt, not in a traceback or a kill.
signal.signal(signal.SIGTERM, terminate)
try:
    status = main()
except KeyboardInterrupt as exc:
    status = 143 if isinstance(exc, Terminated) else 130
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
sys.exit(status)
