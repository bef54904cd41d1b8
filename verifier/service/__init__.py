"""`topolog serve`: the scheduling gate behind HTTP (docs/serve.md).

The same session code as the commands (verifier.session), kept in memory as one revision of
the inventory, policies and principals, answered over HTTP and rebuilt beside the live one
when a file changes. Only this package and verifier.cli import the web stack.
"""
