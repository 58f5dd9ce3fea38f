"""``python -m tracelake`` is the ``tracelake`` command."""

from tracelake.cli import main

main()
