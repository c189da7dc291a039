"""One-line progress on stderr for the long comparison scripts: shown only when
stderr is a terminal, so pipes and CI logs get nothing extra."""
import sys
import time


class Progress:
    def __init__(self, total, stream=sys.stderr):
        self.total = max(total, 1)
        self.done = 0
        self.stream = stream
        self.shown = stream.isatty()
        self.start = time.monotonic()

    def step(self, what):
        """Marks the start of one more step of `total`, described by `what`."""
        self.done += 1
        if not self.shown:
            return
        elapsed = time.monotonic() - self.start
        self.stream.write("\r\033[K[%d/%d, %.0f s] %s" % (self.done, self.total, elapsed, what))
        self.stream.flush()

    def finish(self):
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
